package io.cairn.metadata.image;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.junit.jupiter.api.Test;

/** Cairn's SCRAM key derivation against kafka-clients' {@code ScramFormatter}, the reference. */
class ScramMechanismTest {

    @Test
    void saltedPasswordsAndStoredKeysAreKafkasForRandomPasswordsSaltsAndIterations() throws Exception {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (ScramMechanism mechanism : ScramMechanism.values()) {
            ScramFormatter kafka = new ScramFormatter(
                    org.apache.kafka.common.security.scram.internals.ScramMechanism.forMechanismName(
                            mechanism.mechanismName()));
            for (int i = 0; i < 8; i++) {
                // Given
                byte[] salt = new byte[1 + random.nextInt(40)];
                random.nextBytes(salt);
                StringBuilder password = new StringBuilder();
                for (int c = random.nextInt(30); c >= 0; c--) {
                    password.append((char) (0x20 + random.nextInt(0x3000)));
                }
                int iterations = ScramMechanism.MIN_ITERATIONS + random.nextInt(64);

                // When
                byte[] salted = mechanism.saltedPassword(password.toString(), salt, iterations);
                ScramCredential ours = mechanism.credential("u", salt, salted, iterations);

                // Then
                byte[] kafkaSalted = kafka.saltedPassword(password.toString(), salt, iterations);
                org.apache.kafka.common.security.scram.ScramCredential theirs = kafka.generateCredential(salt,
                        kafkaSalted, iterations);
                assertThat(salted).as("seed %d", seed).isEqualTo(kafkaSalted);
                assertThat(ours.storedKey()).as("seed %d", seed).isEqualTo(theirs.storedKey());
                assertThat(ours.serverKey()).as("seed %d", seed).isEqualTo(theirs.serverKey());
                assertThat(ours.mechanism()).isEqualTo(mechanism.type());
            }
        }
    }

    @Test
    void typesNamesAndBoundsAreKafkas() {
        assertThat(ScramMechanism.forType((byte) 1)).isEqualTo(ScramMechanism.SCRAM_SHA_256);
        assertThat(ScramMechanism.forType((byte) 2)).isEqualTo(ScramMechanism.SCRAM_SHA_512);
        assertThat(ScramMechanism.forType((byte) 0)).isNull();
        assertThat(ScramMechanism.forMechanismName("SCRAM-SHA-512")).isEqualTo(ScramMechanism.SCRAM_SHA_512);
        assertThat(ScramMechanism.forMechanismName("scram-sha-512")).isNull();
        for (ScramMechanism mechanism : ScramMechanism.values()) {
            var kafka = org.apache.kafka.common.security.scram.internals.ScramMechanism.forMechanismName(
                    mechanism.mechanismName());
            assertThat(kafka.type()).isEqualTo(mechanism.type());
            assertThat(kafka.minIterations()).isEqualTo(ScramMechanism.MIN_ITERATIONS);
            assertThat(kafka.maxIterations()).isEqualTo(ScramMechanism.MAX_ITERATIONS);
        }
        assertThat(ScramMechanism.randomSalt()).isNotEqualTo(ScramMechanism.randomSalt());
        assertThat(new String(ScramMechanism.randomSalt(), StandardCharsets.UTF_8)).matches("[0-9a-z]+");
    }
}
