package io.cairn.broker.group;

/**
 * Who sent a group request, as DescribeGroups reports a member: the client id of the request header and the
 * client's address in Kafka's form ({@code /127.0.0.1}). Immutable.
 *
 * @param clientId   the client id, never null ("" when the header had none)
 * @param clientHost the client's address
 */
public record ClientInfo(String clientId, String clientHost) {
}
