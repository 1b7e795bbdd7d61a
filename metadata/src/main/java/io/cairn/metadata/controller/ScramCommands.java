package io.cairn.metadata.controller;

import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.ScramCredential;
import io.cairn.metadata.image.ScramMechanism;
import io.cairn.metadata.record.RemoveUserScramCredentialRecord;
import io.cairn.metadata.record.UserScramCredentialRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData.ScramCredentialDeletion;
import io.cairn.wire.message.AlterUserScramCredentialsRequestData.ScramCredentialUpsertion;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData;
import io.cairn.wire.message.AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult;
import io.cairn.wire.message.DescribeUserScramCredentialsRequestData;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData.CredentialInfo;
import io.cairn.wire.message.DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult;
import io.cairn.wire.protocol.ApiMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * SCRAM credentials as Kafka's {@code ScramControlManager} (AlterUserScramCredentials v0 on the controller) and
 * {@code ScramImage.describe} (DescribeUserScramCredentials v0, answered by any broker from its image) decide them.
 *
 * <p>Alter, per user (Kafka keys the request by user name, not by user and mechanism): a second alteration of the
 * same user in one request fails that user with DUPLICATE_RESOURCE ("A user credential cannot be altered twice in
 * the same request"), deletions first, then upsertions; an empty name is UNACCEPTABLE_CREDENTIAL ("Username must
 * not be empty"), a mechanism other than 1 (SCRAM-SHA-256) and 2 (SCRAM-SHA-512) UNSUPPORTED_SASL_MECHANISM
 * ("Unknown SCRAM mechanism"), fewer than 4096 iterations UNACCEPTABLE_CREDENTIAL ("Too few iterations"), more than
 * 16384 UNACCEPTABLE_CREDENTIAL ("Too many iterations"), deleting a credential the user does not have
 * RESOURCE_NOT_FOUND ("Attempt to delete a user credential that does not exist"). Each accepted deletion is a
 * {@code RemoveUserScramCredentialRecord}, each accepted upsertion a {@code UserScramCredentialRecord} whose
 * StoredKey and ServerKey are derived from the salted password the client sent (the password itself never reaches
 * the broker); the records of one request are committed together. Every user of the request gets one result.
 *
 * <p>Stateless, thread-safe.
 */
public final class ScramCommands {

    static final String DUPLICATE = "A user credential cannot be altered twice in the same request";
    private static final String DESCRIBE_DUPLICATE_USER =
            "Cannot describe SCRAM credentials for the same user twice in a single request: ";
    private static final String DESCRIBE_UNKNOWN_USER = "Attempt to describe a user credential that does not exist: ";

    private ScramCommands() {
    }

    private record Failure(Errors error, String message) {
    }

    static ControllerResult<AlterUserScramCredentialsResponseData> alter(MetadataImage image,
            AlterUserScramCredentialsRequestData request) {
        Map<String, ScramCredentialDeletion> deletions = new LinkedHashMap<>();
        Map<String, ScramCredentialUpsertion> upsertions = new LinkedHashMap<>();
        Map<String, Failure> failures = new LinkedHashMap<>();
        for (ScramCredentialDeletion deletion : request.deletions()) {
            String user = deletion.name();
            if (failures.containsKey(user)) {
                continue;
            }
            if (deletions.remove(user) != null) {
                failures.put(user, new Failure(Errors.DUPLICATE_RESOURCE, DUPLICATE));
                continue;
            }
            Failure failure = validateDeletion(image, deletion);
            if (failure != null) {
                failures.put(user, failure);
            } else {
                deletions.put(user, deletion);
            }
        }
        for (ScramCredentialUpsertion upsertion : request.upsertions()) {
            String user = upsertion.name();
            if (failures.containsKey(user)) {
                continue;
            }
            if (deletions.remove(user) != null || upsertions.remove(user) != null) {
                failures.put(user, new Failure(Errors.DUPLICATE_RESOURCE, DUPLICATE));
                continue;
            }
            Failure failure = validateUpsertion(upsertion);
            if (failure != null) {
                failures.put(user, failure);
            } else {
                upsertions.put(user, upsertion);
            }
        }
        List<ApiMessage> records = new ArrayList<>();
        AlterUserScramCredentialsResponseData response = new AlterUserScramCredentialsResponseData();
        for (ScramCredentialDeletion deletion : deletions.values()) {
            records.add(new RemoveUserScramCredentialRecord().setName(deletion.name())
                    .setMechanism(deletion.mechanism()));
            response.results().add(new AlterUserScramCredentialsResult().setUser(deletion.name())
                    .setErrorCode(Errors.NONE.code()).setErrorMessage(null));
        }
        for (ScramCredentialUpsertion upsertion : upsertions.values()) {
            ScramMechanism mechanism = ScramMechanism.forType(upsertion.mechanism());
            ScramCredential credential = mechanism.credential(upsertion.name(), upsertion.salt(),
                    upsertion.saltedPassword(), upsertion.iterations());
            records.add(new UserScramCredentialRecord().setName(upsertion.name()).setMechanism(mechanism.type())
                    .setSalt(credential.salt()).setStoredKey(credential.storedKey())
                    .setServerKey(credential.serverKey()).setIterations(credential.iterations()));
            response.results().add(new AlterUserScramCredentialsResult().setUser(upsertion.name())
                    .setErrorCode(Errors.NONE.code()).setErrorMessage(null));
        }
        failures.forEach((user, failure) -> response.results().add(new AlterUserScramCredentialsResult()
                .setUser(user).setErrorCode(failure.error().code()).setErrorMessage(failure.message())));
        return new ControllerResult<>(records, response);
    }

    private static Failure validateDeletion(MetadataImage image, ScramCredentialDeletion deletion) {
        Failure failure = validateUserAndMechanism(deletion.name(), deletion.mechanism());
        if (failure != null) {
            return failure;
        }
        Map<Byte, ScramCredential> existing = image.scram().get(deletion.name());
        if (existing == null || !existing.containsKey(deletion.mechanism())) {
            return new Failure(Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist");
        }
        return null;
    }

    private static Failure validateUpsertion(ScramCredentialUpsertion upsertion) {
        Failure failure = validateUserAndMechanism(upsertion.name(), upsertion.mechanism());
        if (failure != null) {
            return failure;
        }
        if (upsertion.iterations() < ScramMechanism.MIN_ITERATIONS) {
            return new Failure(Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations");
        }
        if (upsertion.iterations() > ScramMechanism.MAX_ITERATIONS) {
            return new Failure(Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations");
        }
        return null;
    }

    private static Failure validateUserAndMechanism(String user, byte mechanism) {
        if (user.isEmpty()) {
            return new Failure(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty");
        }
        if (ScramMechanism.forType(mechanism) == null) {
            return new Failure(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism");
        }
        return null;
    }

    /**
     * DescribeUserScramCredentials from {@code image}: no users (null or empty) describes every user that has a
     * credential (in name order); a named user without any credential is RESOURCE_NOT_FOUND, a user named twice
     * DUPLICATE_RESOURCE (once), each with Kafka's message. Each result lists the user's mechanisms and iterations,
     * never a salt or key.
     */
    public static DescribeUserScramCredentialsResponseData describe(MetadataImage image,
            DescribeUserScramCredentialsRequestData request) {
        Map<String, Boolean> users = new LinkedHashMap<>();
        if (request.users() == null || request.users().isEmpty()) {
            new TreeMap<>(image.scram()).keySet().forEach(user -> users.put(user, false));
        } else {
            request.users().forEach(user -> users.put(user.name(), users.containsKey(user.name())));
        }
        DescribeUserScramCredentialsResponseData response = new DescribeUserScramCredentialsResponseData()
                .setErrorCode(Errors.NONE.code());
        users.forEach((user, duplicate) -> {
            DescribeUserScramCredentialsResult result = new DescribeUserScramCredentialsResult().setUser(user);
            Map<Byte, ScramCredential> credentials = image.scram().get(user);
            if (duplicate) {
                result.setErrorCode(Errors.DUPLICATE_RESOURCE.code()).setErrorMessage(DESCRIBE_DUPLICATE_USER + user);
            } else if (credentials == null || credentials.isEmpty()) {
                result.setErrorCode(Errors.RESOURCE_NOT_FOUND.code()).setErrorMessage(DESCRIBE_UNKNOWN_USER + user);
            } else {
                new TreeMap<>(credentials).forEach((mechanism, credential) -> result.credentialInfos().add(
                        new CredentialInfo().setMechanism(mechanism).setIterations(credential.iterations())));
            }
            response.results().add(result);
        });
        return response;
    }
}
