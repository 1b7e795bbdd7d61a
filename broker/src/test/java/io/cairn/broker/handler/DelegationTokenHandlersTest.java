package io.cairn.broker.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.cairn.broker.config.SecurityProtocol;
import io.cairn.broker.security.Authorizer;
import io.cairn.broker.security.KafkaPrincipal;
import io.cairn.broker.security.StandardAclAuthorizer;
import io.cairn.metadata.MetadataConfig;
import io.cairn.metadata.controller.DelegationTokenSettings;
import io.cairn.metadata.image.AclEntry;
import io.cairn.metadata.image.AclOperation;
import io.cairn.metadata.image.AclPatternType;
import io.cairn.metadata.image.AclResourceType;
import io.cairn.metadata.image.MetadataImage;
import io.cairn.wire.error.Errors;
import io.cairn.wire.message.ApiKey;
import io.cairn.wire.message.CreateDelegationTokenRequestData;
import io.cairn.wire.message.CreateDelegationTokenRequestData.CreatableRenewers;
import io.cairn.wire.message.CreateDelegationTokenResponseData;
import io.cairn.wire.message.DescribeDelegationTokenRequestData;
import io.cairn.wire.message.DescribeDelegationTokenRequestData.DescribeDelegationTokenOwner;
import io.cairn.wire.message.DescribeDelegationTokenResponseData;
import io.cairn.wire.message.DescribeDelegationTokenResponseData.DescribedDelegationToken;
import io.cairn.wire.message.ExpireDelegationTokenRequestData;
import io.cairn.wire.message.ExpireDelegationTokenResponseData;
import io.cairn.wire.message.RenewDelegationTokenRequestData;
import io.cairn.wire.message.RenewDelegationTokenResponseData;
import io.cairn.wire.message.RequestHeaderData;
import io.cairn.wire.protocol.ApiMessage;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The four delegation-token APIs against a real controller: forwarding with the requester, Kafka's
 * {@code allowTokenRequests}, CREATE_TOKENS for another owner, describe visibility and the v3-only requester.
 */
class DelegationTokenHandlersTest {

    private static final Map<String, String> CONFIG = Map.of("delegation.token.secret.key", "secret");
    private static final DelegationTokenSettings SETTINGS = MetadataConfig.delegationTokens(CONFIG);

    @TempDir
    static Path dir;
    private static MetadataFixture fixture;

    @BeforeAll
    static void startMetadata() throws Exception {
        fixture = MetadataFixture.start(dir, CONFIG);
    }

    @AfterAll
    static void stopMetadata() {
        fixture.close();
    }

    /** A request of {@code user} over {@code protocol}, with the standard authorizer holding {@code acls}. */
    private static RequestContext context(ApiKey key, int version, SecurityProtocol protocol, String user,
                                          boolean viaToken, AclEntry... acls) {
        Map<io.cairn.wire.protocol.Uuid, AclEntry> byId = new HashMap<>();
        for (AclEntry acl : acls) {
            byId.put(acl.id(), acl);
        }
        StandardAclAuthorizer authorizer = new StandardAclAuthorizer(Set.of(), false);
        authorizer.load(new MetadataImage(-1L, "", -1, 0L, Map.of(), Map.of(), Map.of(), Map.of(), 0L, 0L, byId,
                Map.of(), Map.of()));
        ClientConnection connection = new ClientConnection("c", "L", new InetSocketAddress("127.0.0.1", 40000),
                protocol);
        connection.authenticated(new KafkaPrincipal(KafkaPrincipal.USER_TYPE, user), viaToken);
        RequestHeaderData header = new RequestHeaderData().setRequestApiKey(key.id())
                .setRequestApiVersion((short) version).setCorrelationId(1).setClientId("test");
        return new RequestContext(header, key, connection, acls.length == 0 ? Authorizer.NONE : authorizer);
    }

    private static RequestContext sasl(ApiKey key, int version, String user, AclEntry... acls) {
        return context(key, version, SecurityProtocol.SASL_PLAINTEXT, user, false, acls);
    }

    @SuppressWarnings("unchecked")
    private static <Q extends ApiMessage, S extends ApiMessage> S call(ApiHandler<Q, S> handler, RequestContext ctx,
                                                                       Q request) throws Exception {
        S response = handler.handle(ctx, request).toCompletableFuture().get(10, TimeUnit.SECONDS);
        return (S) MetadataFixture.roundTrip(response, handler.apiKey(), ctx.apiVersion(), true);
    }

    private static CreateDelegationTokenResponseData create(RequestContext ctx, CreateDelegationTokenRequestData r)
            throws Exception {
        return call(new CreateDelegationTokenHandler(fixture.node()), ctx, r);
    }

    private static CreateDelegationTokenRequestData withRenewer(String renewer) {
        return new CreateDelegationTokenRequestData().setRenewers(new ArrayList<>(List.of(new CreatableRenewers()
                .setPrincipalType("User").setPrincipalName(renewer)))).setMaxLifetimeMs(-1);
    }

    private static DescribeDelegationTokenResponseData describe(RequestContext ctx, String... owners)
            throws Exception {
        DescribeDelegationTokenRequestData request = new DescribeDelegationTokenRequestData().setOwners(null);
        if (owners.length > 0) {
            List<DescribeDelegationTokenOwner> list = new ArrayList<>();
            for (String owner : owners) {
                list.add(new DescribeDelegationTokenOwner().setPrincipalType("User").setPrincipalName(owner));
            }
            request.setOwners(list);
        }
        return call(new DescribeDelegationTokenHandler(fixture.node(), SETTINGS), ctx, request);
    }

    private static List<String> ids(DescribeDelegationTokenResponseData response) {
        return response.tokens().stream().map(DescribedDelegationToken::tokenId).toList();
    }

    @Test
    void aTokenIsCreatedForTheRequesterAndDescribedToItsOwnerAndRenewer() throws Exception {
        CreateDelegationTokenResponseData created = create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 3, "alice"),
                withRenewer("bob"));
        CreateDelegationTokenResponseData v1 = create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 1, "alice"),
                withRenewer("bob"));

        assertThat(created.errorCode()).isZero();
        assertThat(created.principalName()).isEqualTo("alice");
        assertThat(created.tokenRequesterPrincipalName()).isEqualTo("alice");
        assertThat(created.hmac()).isEqualTo(SETTINGS.hmac(created.tokenId()));
        assertThat(v1.errorCode()).isZero();
        assertThat(v1.tokenRequesterPrincipalName()).isEmpty();
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.node().currentImage().delegationTokens()
                .containsKey(created.tokenId()));
        DescribedDelegationToken byAlice = describe(sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 3, "alice")).tokens()
                .stream().filter(t -> t.tokenId().equals(created.tokenId())).findFirst().orElseThrow();
        assertThat(byAlice.hmac()).isEqualTo(created.hmac());
        assertThat(byAlice.tokenRequesterPrincipalName()).isEqualTo("alice");
        assertThat(byAlice.renewers()).hasSize(1);
        assertThat(ids(describe(sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 1, "bob")))).contains(created.tokenId());
    }

    @Test
    void describeShowsOthersTokensOnlyWithDescribeTokensOrDescribeOnTheToken() throws Exception {
        CreateDelegationTokenResponseData created = create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 3, "dave"),
                withRenewer("erin"));
        await().atMost(Duration.ofSeconds(10)).until(() -> fixture.node().currentImage().delegationTokens()
                .containsKey(created.tokenId()));
        AclEntry unrelated = MetadataFixture.allow(AclResourceType.TOPIC, "t", AclPatternType.LITERAL, "User:carol",
                AclOperation.READ);
        AclEntry describeTokens = MetadataFixture.allow(AclResourceType.USER, "User:dave", AclPatternType.LITERAL,
                "User:carol", AclOperation.DESCRIBE_TOKENS);
        AclEntry describeToken = MetadataFixture.allow(AclResourceType.DELEGATION_TOKEN, created.tokenId(),
                AclPatternType.LITERAL, "User:frank", AclOperation.DESCRIBE);

        assertThat(ids(describe(sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 2, "carol", unrelated))))
                .doesNotContain(created.tokenId());
        assertThat(ids(describe(sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 2, "carol", describeTokens))))
                .contains(created.tokenId());
        assertThat(ids(describe(sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 2, "frank", describeToken))))
                .containsExactly(created.tokenId());
        assertThat(ids(describe(sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 2, "dave", unrelated), "erin")))
                .containsExactly(created.tokenId());
        assertThat(ids(describe(sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 2, "dave", unrelated), "nobody"))).isEmpty();
        DescribeDelegationTokenRequestData empty = new DescribeDelegationTokenRequestData()
                .setOwners(new ArrayList<>());
        assertThat(call(new DescribeDelegationTokenHandler(fixture.node(), SETTINGS),
                sasl(ApiKey.DESCRIBE_DELEGATION_TOKEN, 2, "dave"), empty).tokens()).isEmpty();
    }

    @Test
    void anOwnerNameWithoutATypeIsAnInvalidRequestWithAnEncodableAnswer() throws Exception {
        // Given: v3 makes both owner fields nullable; the Java client sets both or neither
        CreateDelegationTokenRequestData request = withRenewer("bob").setOwnerPrincipalType(null)
                .setOwnerPrincipalName("carol");

        // When (the round trip encodes the answer, which once failed on the null type and closed the connection)
        CreateDelegationTokenResponseData refused = create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 3, "alice"), request);

        // Then
        assertThat(refused.errorCode()).isEqualTo(Errors.INVALID_REQUEST.code());
        assertThat(refused.tokenRequesterPrincipalName()).isEqualTo("alice");
    }

    @Test
    void aTokenForAnotherOwnerNeedsCreateTokensOnThatUser() throws Exception {
        CreateDelegationTokenRequestData forBob = withRenewer("carol").setOwnerPrincipalType("User")
                .setOwnerPrincipalName("bob");
        AclEntry unrelated = MetadataFixture.allow(AclResourceType.TOPIC, "t", AclPatternType.LITERAL, "User:alice",
                AclOperation.READ);
        AclEntry createTokens = MetadataFixture.allow(AclResourceType.USER, "User:bob", AclPatternType.LITERAL,
                "User:alice", AclOperation.CREATE_TOKENS);

        CreateDelegationTokenResponseData refused = create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 3, "alice",
                unrelated), forBob);
        CreateDelegationTokenResponseData allowed = create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 3, "alice",
                createTokens), forBob);

        assertThat(refused.errorCode()).isEqualTo(Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED.code());
        assertThat(allowed.errorCode()).isZero();
        assertThat(allowed.principalName()).isEqualTo("bob");
        assertThat(allowed.tokenRequesterPrincipalName()).isEqualTo("alice");
        CreateDelegationTokenRequestData groupRenewer = new CreateDelegationTokenRequestData().setRenewers(
                new ArrayList<>(List.of(new CreatableRenewers().setPrincipalType("Group").setPrincipalName("g"))));
        assertThat(create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 3, "alice"), groupRenewer).errorCode())
                .isEqualTo(Errors.INVALID_PRINCIPAL_TYPE.code());
    }

    @Test
    void tokenRequestsAreRefusedOverPlaintextOneWaySslAndTokenAuthenticatedConnections() throws Exception {
        List<RequestContext> refused = new ArrayList<>();
        for (ApiKey key : List.of(ApiKey.CREATE_DELEGATION_TOKEN, ApiKey.RENEW_DELEGATION_TOKEN,
                ApiKey.EXPIRE_DELEGATION_TOKEN, ApiKey.DESCRIBE_DELEGATION_TOKEN)) {
            refused.add(context(key, 2, SecurityProtocol.PLAINTEXT, "alice", false));
            refused.add(context(key, 2, SecurityProtocol.SSL, "ANONYMOUS", false));
            refused.add(context(key, 2, SecurityProtocol.SASL_SSL, "alice", true));
        }
        short notAllowed = Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.code();

        for (RequestContext ctx : refused) {
            short code = switch (ctx.apiKey()) {
                case CREATE_DELEGATION_TOKEN -> create(ctx, withRenewer("bob")).errorCode();
                case RENEW_DELEGATION_TOKEN -> call(new RenewDelegationTokenHandler(fixture.node()), ctx,
                        new RenewDelegationTokenRequestData().setHmac(new byte[64])).errorCode();
                case EXPIRE_DELEGATION_TOKEN -> call(new ExpireDelegationTokenHandler(fixture.node()), ctx,
                        new ExpireDelegationTokenRequestData().setHmac(new byte[64])).errorCode();
                default -> describe(ctx).errorCode();
            };
            assertThat(code).as("%s over %s", ctx.apiKey(), ctx.connection().securityProtocol())
                    .isEqualTo(notAllowed);
        }
        assertThat(create(context(ApiKey.CREATE_DELEGATION_TOKEN, 2, SecurityProtocol.SSL, "CN=alice", false),
                withRenewer("bob")).errorCode()).isZero();
    }

    @Test
    void theRenewerRenewsAndTheOwnerExpiresAtOnce() throws Exception {
        CreateDelegationTokenResponseData created = create(sasl(ApiKey.CREATE_DELEGATION_TOKEN, 3, "gina"),
                withRenewer("hank"));

        RenewDelegationTokenResponseData renewed = call(new RenewDelegationTokenHandler(fixture.node()),
                sasl(ApiKey.RENEW_DELEGATION_TOKEN, 2, "hank"), new RenewDelegationTokenRequestData()
                        .setHmac(created.hmac()).setRenewPeriodMs(1000));
        RenewDelegationTokenResponseData byStranger = call(new RenewDelegationTokenHandler(fixture.node()),
                sasl(ApiKey.RENEW_DELEGATION_TOKEN, 2, "ivan"), new RenewDelegationTokenRequestData()
                        .setHmac(created.hmac()).setRenewPeriodMs(1000));
        ExpireDelegationTokenResponseData expired = call(new ExpireDelegationTokenHandler(fixture.node()),
                sasl(ApiKey.EXPIRE_DELEGATION_TOKEN, 2, "gina"), new ExpireDelegationTokenRequestData()
                        .setHmac(created.hmac()).setExpiryTimePeriodMs(-1));

        assertThat(renewed.errorCode()).isZero();
        assertThat(renewed.expiryTimestampMs()).isLessThan(created.expiryTimestampMs());
        assertThat(byStranger.errorCode()).isEqualTo(Errors.DELEGATION_TOKEN_OWNER_MISMATCH.code());
        assertThat(expired.errorCode()).isZero();
        await().atMost(Duration.ofSeconds(10)).until(() -> !fixture.node().currentImage().delegationTokens()
                .containsKey(created.tokenId()));
    }
}
