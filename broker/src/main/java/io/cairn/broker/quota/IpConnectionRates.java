package io.cairn.broker.quota;

import io.cairn.metadata.image.ClientQuotaEntity;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The {@code connection_creation_rate} quotas of IP entities (KIP-612, {@code kafka-configs --entity-type ips}), as
 * Kafka's {@code ClientQuotaMetadataManager} hands them to its {@code ConnectionQuotas}: per address (a host name
 * resolved once, when the quotas change) and a default for every other address ({@code --entity-default}), else
 * unbounded ({@link Integer#MAX_VALUE}, Kafka's {@code IP_CONNECTION_RATE_DEFAULT}, which also means "no quota").
 * Immutable.
 *
 * @param byAddress   the addresses with their own rate
 * @param defaultRate the rate of every other address
 */
public record IpConnectionRates(Map<InetAddress, Integer> byAddress, int defaultRate) {

    private static final Logger LOGGER = LogManager.getLogger(IpConnectionRates.class);
    /** The quota key. */
    public static final String KEY = "connection_creation_rate";
    /** No IP quotas. */
    public static final IpConnectionRates NONE = new IpConnectionRates(Map.of(), Integer.MAX_VALUE);

    public IpConnectionRates {
        byAddress = Map.copyOf(byAddress);
    }

    /** The rate of connections {@code address} may create per second; {@link Integer#MAX_VALUE} for no quota. */
    public int rateFor(InetAddress address) {
        return byAddress.getOrDefault(address, defaultRate);
    }

    /** The IP quotas among every entity's quota values (entity to key to value). */
    static IpConnectionRates from(Map<ClientQuotaEntity, Map<String, Double>> all) {
        Map<InetAddress, Integer> byAddress = new LinkedHashMap<>();
        int defaultRate = Integer.MAX_VALUE;
        for (Map.Entry<ClientQuotaEntity, Map<String, Double>> e : all.entrySet()) {
            Map<String, String> entries = e.getKey().entries();
            Double value = e.getValue().get(KEY);
            if (!entries.containsKey(ClientQuotaEntity.IP) || value == null) {
                continue;
            }
            // Kafka's quotaValue.toInt: the value was checked to be an INT when it was altered.
            int rate = (int) value.doubleValue();
            String ip = entries.get(ClientQuotaEntity.IP);
            if (ip == null) {
                defaultRate = rate;
                continue;
            }
            try {
                byAddress.put(InetAddress.getByName(ip), rate);
            } catch (UnknownHostException ex) {
                LOGGER.error("Failed to update IP quota {}: Unable to resolve address {}", e.getKey(), ip);
            }
        }
        return new IpConnectionRates(byAddress, defaultRate);
    }
}
