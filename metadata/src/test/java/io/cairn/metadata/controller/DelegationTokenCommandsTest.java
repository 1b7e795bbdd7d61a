package io.cairn.metadata.controller;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.image.DelegationToken;
import io.cairn.metadata.image.ImageRecords;
import io.cairn.metadata.image.MetadataDelta;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.metadata.image.MetadataRecords;
import io.cairn.metadata.record.DelegationTokenRecord;
import io.cairn.metadata.record.RemoveDelegationTokenRecord;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.CreateDelegationTokenRequestData;
import io.cairn.wire.message.CreateDelegationTokenRequestData.CreatableRenewers;
import io.cairn.wire.message.CreateDelegationTokenResponseData;
import io.cairn.wire.message.EnvelopeRequestData;
import io.cairn.wire.message.ExpireDelegationTokenRequestData;
import io.cairn.wire.message.ExpireDelegationTokenResponseData;
import io.cairn.wire.message.RenewDelegationTokenRequestData;
import io.cairn.wire.message.RenewDelegationTokenResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** Delegation tokens with Kafka's DelegationTokenControlManager rules, replayed into the image and its snapshot. */
class DelegationTokenCommandsTest {

    private static final long DAY = 86_400_000L;
    private static final long WEEK = 7 * DAY;
    private static final DelegationTokenSettings SETTINGS =
            new DelegationTokenSettings("secret", WEEK, DAY, 3_600_000L);
    private static final String ALICE = "User:alice";
    private static final String BOB = "User:bob";
    private static final String CAROL = "User:carol";

    private MetadataImage image = MetadataImage.EMPTY;

    private static CreateDelegationTokenRequestData createRequest(String... renewers) {
        List<CreatableRenewers> list = new ArrayList<>();
        for (String renewer : renewers) {
            list.add(new CreatableRenewers().setPrincipalType(DelegationToken.principalType(renewer))
                    .setPrincipalName(DelegationToken.principalName(renewer)));
        }
        return new CreateDelegationTokenRequestData().setRenewers(list).setMaxLifetimeMs(-1);
    }

    private <R> R commit(ControllerResult<R> result) {
        image = ControllerLogic.apply(image, result.records());
        return result.response();
    }

    private CreateDelegationTokenResponseData create(String requester, long now, String id, String... renewers) {
        return commit(DelegationTokenCommands.create(image, SETTINGS, createRequest(renewers), requester, now, id));
    }

    @Test
    void theHmacIsHmacSha512OfTheTokenIdKeyedByTheSecret() throws Exception {
        Mac mac = Mac.getInstance("HmacSHA512");
        mac.init(new SecretKeySpec("secret".getBytes(StandardCharsets.UTF_8), "HmacSHA512"));
        byte[] expected = mac.doFinal("token-1".getBytes(StandardCharsets.UTF_8));

        assertThat(SETTINGS.hmac("token-1")).isEqualTo(expected).hasSize(64);
        // RFC 4231 test case 2 (key "Jefe"), as a check of the primitive itself
        assertThat(HexFormat.of().formatHex(new DelegationTokenSettings("Jefe", 1, 1, 1)
                .hmac("what do ya want for nothing?"))).startsWith("164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd6");
    }

    @Test
    void createSetsOwnerRequesterRenewersAndKafkasTimestamps() {
        CreateDelegationTokenResponseData response = create(ALICE, 1000L, "t1", BOB);

        assertThat(response.errorCode()).isZero();
        assertThat(response.principalName()).isEqualTo("alice");
        assertThat(response.tokenRequesterPrincipalName()).isEqualTo("alice");
        assertThat(response.issueTimestampMs()).isEqualTo(1000L);
        assertThat(response.expiryTimestampMs()).isEqualTo(1000L + DAY);
        assertThat(response.maxTimestampMs()).isEqualTo(1000L + WEEK);
        assertThat(response.hmac()).isEqualTo(SETTINGS.hmac("t1"));
        assertThat(image.delegationTokens()).containsEntry("t1",
                new DelegationToken("t1", ALICE, ALICE, List.of(BOB), 1000L, 1000L + WEEK, 1000L + DAY));
    }

    @Test
    void createForAnotherOwnerAndAShorterMaxLifetime() {
        CreateDelegationTokenRequestData request = createRequest().setOwnerPrincipalType("User")
                .setOwnerPrincipalName("bob").setMaxLifetimeMs(5000L);

        CreateDelegationTokenResponseData response = commit(DelegationTokenCommands.create(image, SETTINGS, request,
                ALICE, 0L, "t1"));

        assertThat(response.principalName()).isEqualTo("bob");
        assertThat(response.tokenRequesterPrincipalName()).isEqualTo("alice");
        assertThat(response.maxTimestampMs()).isEqualTo(5000L);
        assertThat(response.expiryTimestampMs()).isEqualTo(5000L);
        assertThat(image.delegationTokens().get("t1").owner()).isEqualTo(BOB);
    }

    @Test
    void refusalsWriteNothing() {
        DelegationTokenSettings disabled = DelegationTokenSettings.DISABLED;
        assertThat(DelegationTokenCommands.create(image, disabled, createRequest(), ALICE, 0L, "t").response()
                .errorCode()).isEqualTo(Errors.DELEGATION_TOKEN_AUTH_DISABLED.code());
        ControllerResult<CreateDelegationTokenResponseData> group = DelegationTokenCommands.create(image, SETTINGS,
                createRequest("Group:g"), ALICE, 0L, "t");
        assertThat(group.response().errorCode()).isEqualTo(Errors.INVALID_PRINCIPAL_TYPE.code());
        assertThat(group.records()).isEmpty();
        String[] many = new String[DelegationTokenCommands.MAX_RENEWERS + 1];
        for (int i = 0; i < many.length; i++) {
            many[i] = "User:u" + i;
        }
        assertThat(DelegationTokenCommands.create(image, SETTINGS, createRequest(many), ALICE, 0L, "t").response()
                .errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(DelegationTokenCommands.renew(image, disabled, new RenewDelegationTokenRequestData()
                .setHmac(new byte[64]), ALICE, 0L).response().errorCode())
                .isEqualTo(Errors.DELEGATION_TOKEN_AUTH_DISABLED.code());
    }

    @Test
    void renewByOwnerOrRenewerOnlyAndNeverBeyondTheMaximum() {
        create(ALICE, 0L, "t1", BOB);
        byte[] hmac = SETTINGS.hmac("t1");

        RenewDelegationTokenResponseData byCarol = commit(DelegationTokenCommands.renew(image, SETTINGS,
                new RenewDelegationTokenRequestData().setHmac(hmac).setRenewPeriodMs(-1), CAROL, 10L));
        RenewDelegationTokenResponseData byBob = commit(DelegationTokenCommands.renew(image, SETTINGS,
                new RenewDelegationTokenRequestData().setHmac(hmac).setRenewPeriodMs(-1), BOB, 5000L));
        commit(DelegationTokenCommands.create(image, SETTINGS, createRequest().setMaxLifetimeMs(DAY + DAY / 2),
                ALICE, 0L, "t2"));
        RenewDelegationTokenResponseData late = commit(DelegationTokenCommands.renew(image, SETTINGS,
                new RenewDelegationTokenRequestData().setHmac(SETTINGS.hmac("t2")).setRenewPeriodMs(DAY), ALICE,
                DAY));
        RenewDelegationTokenResponseData unknown = commit(DelegationTokenCommands.renew(image, SETTINGS,
                new RenewDelegationTokenRequestData().setHmac(SETTINGS.hmac("nope")), ALICE, 10L));

        assertThat(byCarol.errorCode()).isEqualTo(Errors.DELEGATION_TOKEN_OWNER_MISMATCH.code());
        assertThat(byBob.errorCode()).isZero();
        assertThat(byBob.expiryTimestampMs()).isEqualTo(5000L + DAY);
        assertThat(late.expiryTimestampMs()).isEqualTo(DAY + DAY / 2);
        assertThat(image.delegationTokens().get("t2").expirationTimestamp()).isEqualTo(DAY + DAY / 2);
        assertThat(image.delegationTokens().get("t1").expirationTimestamp()).isEqualTo(5000L + DAY);
        assertThat(unknown.errorCode()).isEqualTo(Errors.DELEGATION_TOKEN_NOT_FOUND.code());
    }

    @Test
    void renewingAnExpiredTokenIsDelegationTokenExpired() {
        create(ALICE, 0L, "t1");

        RenewDelegationTokenResponseData response = commit(DelegationTokenCommands.renew(image, SETTINGS,
                new RenewDelegationTokenRequestData().setHmac(SETTINGS.hmac("t1")), ALICE, DAY + 1));

        assertThat(response.errorCode()).isEqualTo(Errors.DELEGATION_TOKEN_EXPIRED.code());
    }

    @Test
    void expireWithANegativePeriodRemovesTheTokenAtOnceAndAPositiveOneShortensIt() {
        create(ALICE, 0L, "t1", BOB);
        create(ALICE, 0L, "t2");

        ExpireDelegationTokenResponseData shortened = commit(DelegationTokenCommands.expire(image, SETTINGS,
                new ExpireDelegationTokenRequestData().setHmac(SETTINGS.hmac("t2")).setExpiryTimePeriodMs(100),
                ALICE, 50L));
        ExpireDelegationTokenResponseData byCarol = commit(DelegationTokenCommands.expire(image, SETTINGS,
                new ExpireDelegationTokenRequestData().setHmac(SETTINGS.hmac("t1")).setExpiryTimePeriodMs(-1),
                CAROL, 60L));
        ControllerResult<ExpireDelegationTokenResponseData> byBob = DelegationTokenCommands.expire(image, SETTINGS,
                new ExpireDelegationTokenRequestData().setHmac(SETTINGS.hmac("t1")).setExpiryTimePeriodMs(-1),
                BOB, 70L);
        commit(byBob);

        assertThat(shortened.expiryTimestampMs()).isEqualTo(150L);
        assertThat(byCarol.errorCode()).isEqualTo(Errors.DELEGATION_TOKEN_OWNER_MISMATCH.code());
        assertThat(byBob.response().expiryTimestampMs()).isEqualTo(70L);
        assertThat(byBob.records()).containsExactly(new RemoveDelegationTokenRecord().setTokenId("t1"));
        assertThat(image.delegationTokens()).containsOnlyKeys("t2");
    }

    @Test
    void theSweepRemovesTokensPastTheirExpiryOrMaximum() {
        create(ALICE, 0L, "t1");
        create(ALICE, DAY, "t2");

        List<ApiMessage> swept = DelegationTokenCommands.sweepExpired(image, DAY + 1);
        image = ControllerLogic.apply(image, swept);

        assertThat(swept).containsExactly(new RemoveDelegationTokenRecord().setTokenId("t1"));
        assertThat(image.delegationTokens()).containsOnlyKeys("t2");
        assertThat(DelegationTokenCommands.sweepExpired(image, DAY + 1)).isEmpty();
    }

    @Test
    void tokensSurviveASnapshotAndTheRecordsRoundTrip() {
        create(ALICE, 0L, "t2", BOB, CAROL);
        create(BOB, 5L, "t1");

        List<ApiMessage> snapshot = ImageRecords.of(image);
        MetadataImage rebuilt = new MetadataDelta(MetadataImage.EMPTY)
                .replayAll(MetadataRecords.decode(MetadataRecords.encode(snapshot))).apply(image.offset());

        assertThat(snapshot.stream().filter(r -> r instanceof DelegationTokenRecord)
                .map(r -> ((DelegationTokenRecord) r).tokenId())).containsExactly("t1", "t2");
        assertThat(rebuilt.delegationTokens()).isEqualTo(image.delegationTokens());
    }

    @Test
    void aForwardedCommandCarriesItsPrincipalThroughTheEnvelope() {
        ControllerLogic logic = new ControllerLogic(ControllerSettings.defaults(1).withDelegationTokens(SETTINGS));
        EnvelopeRequestData envelope = ForwardedRequest.wrap(createRequest(BOB), ALICE);

        ControllerResult<? extends ApiMessage> result = logic.handleForwarded(image,
                ForwardedRequest.unwrap(envelope), 42L);

        CreateDelegationTokenResponseData response = (CreateDelegationTokenResponseData) result.response();
        assertThat(response.errorCode()).isZero();
        assertThat(response.tokenRequesterPrincipalName()).isEqualTo("alice");
        assertThat(response.issueTimestampMs()).isEqualTo(42L);
        assertThat(response.tokenId()).isNotEmpty();
        assertThat(result.records()).hasSize(1);
    }
}
