package io.cairn.broker.security;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Cipher;
import javax.crypto.EncryptedPrivateKeyInfo;
import javax.crypto.SecretKey;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;

/**
 * Key and trust stores built from PEM text, as Kafka's {@code PEM} store type reads it: certificates in
 * {@code -----BEGIN CERTIFICATE-----} blocks, one PKCS#8 private key ({@code BEGIN PRIVATE KEY}, or
 * {@code BEGIN ENCRYPTED PRIVATE KEY} decrypted with {@code ssl.key.password}), RSA, EC or DSA. Text around the
 * blocks is ignored and the base64 may be broken over lines or not (a value on one line of a properties file).
 *
 * <p>Stateless and thread-safe.
 */
final class PemStores {

    private static final Pattern BLOCK = Pattern.compile("-----BEGIN ([A-Z ]+)-----(.*?)-----END \\1-----",
            Pattern.DOTALL);
    private static final String[] KEY_ALGORITHMS = {"RSA", "EC", "DSA"};
    /** The alias of the key entry (a PEM store has one). */
    static final String KEY_ALIAS = "cairn";

    private PemStores() {
    }

    /** A key store holding the one private key of {@code keyPem} with the chain of {@code chainPem}. */
    static KeyStore keyStore(String keyPem, String chainPem, char[] keyPassword) throws GeneralSecurityException,
            IOException {
        List<byte[]> keys = new ArrayList<>();
        keys.addAll(blocks(keyPem, "PRIVATE KEY"));
        List<byte[]> encrypted = blocks(keyPem, "ENCRYPTED PRIVATE KEY");
        if (keys.size() + encrypted.size() != 1) {
            throw new GeneralSecurityException("expected one PEM private key (BEGIN PRIVATE KEY or BEGIN ENCRYPTED "
                    + "PRIVATE KEY), found " + (keys.size() + encrypted.size()));
        }
        PKCS8EncodedKeySpec spec;
        if (!encrypted.isEmpty()) {
            if (keyPassword == null) {
                throw new GeneralSecurityException("the PEM private key is encrypted, but no key password is set");
            }
            spec = decrypt(encrypted.get(0), keyPassword);
        } else {
            spec = new PKCS8EncodedKeySpec(keys.get(0));
        }
        PrivateKey key = privateKey(spec);
        Certificate[] chain = certificates(chainPem).toArray(new Certificate[0]);
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        char[] entryPassword = keyPassword != null ? keyPassword : new char[0];
        store.setKeyEntry(KEY_ALIAS, key, entryPassword, chain);
        return store;
    }

    /** A trust store holding every certificate of {@code certificatesPem}. */
    static KeyStore trustStore(String certificatesPem) throws GeneralSecurityException, IOException {
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(null, null);
        List<Certificate> certificates = certificates(certificatesPem);
        for (int i = 0; i < certificates.size(); i++) {
            store.setCertificateEntry("cairn-" + i, certificates.get(i));
        }
        return store;
    }

    private static PKCS8EncodedKeySpec decrypt(byte[] der, char[] password) throws GeneralSecurityException,
            IOException {
        EncryptedPrivateKeyInfo info = new EncryptedPrivateKeyInfo(der);
        String algorithm = info.getAlgName();
        SecretKeyFactory factory = SecretKeyFactory.getInstance(algorithm);
        SecretKey secret = factory.generateSecret(new PBEKeySpec(password));
        Cipher cipher = Cipher.getInstance(algorithm);
        cipher.init(Cipher.DECRYPT_MODE, secret, info.getAlgParameters());
        return info.getKeySpec(cipher);
    }

    private static PrivateKey privateKey(PKCS8EncodedKeySpec spec) throws GeneralSecurityException {
        InvalidKeySpecException first = null;
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (InvalidKeySpecException e) {
                if (first == null) {
                    first = e;
                }
            }
        }
        throw new GeneralSecurityException("the PEM private key is not an RSA, EC or DSA PKCS#8 key", first);
    }

    private static List<Certificate> certificates(String pem) throws GeneralSecurityException {
        List<byte[]> blocks = blocks(pem, "CERTIFICATE");
        if (blocks.isEmpty()) {
            throw new GeneralSecurityException("expected at least one PEM certificate (BEGIN CERTIFICATE), found "
                    + "none");
        }
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        List<Certificate> certificates = new ArrayList<>();
        for (byte[] block : blocks) {
            certificates.add(factory.generateCertificate(new ByteArrayInputStream(block)));
        }
        return certificates;
    }

    /** The decoded contents of every {@code BEGIN <label>} block of {@code pem}. */
    private static List<byte[]> blocks(String pem, String label) throws GeneralSecurityException {
        List<byte[]> found = new ArrayList<>();
        Matcher matcher = BLOCK.matcher(pem);
        while (matcher.find()) {
            if (matcher.group(1).equals(label)) {
                try {
                    found.add(Base64.getMimeDecoder().decode(matcher.group(2).trim()));
                } catch (IllegalArgumentException e) {
                    throw new GeneralSecurityException("the PEM " + label + " block is not valid base64", e);
                }
            }
        }
        return found;
    }
}
