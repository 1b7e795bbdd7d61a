package io.cairn.broker.group.consumer;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.cairn.broker.coordinator.CoordinatorRecord;
import io.cairn.broker.coordinator.ShardContext;
import io.cairn.wire.error.Errors;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;

/**
 * The regular expressions a consumer group's members subscribe to (KIP-848 {@code SubscribedTopicRegex}): compiled
 * with RE2J as Kafka compiles them, resolved against the topics' names, refreshed when Kafka refreshes them. Part of
 * one shard's {@link ConsumerGroupManager}.
 *
 * <p>Thread-safety: not thread-safe; runs on the shard's thread.
 */
final class RegularExpressions {

    /** Kafka's {@code REGEX_BATCH_REFRESH_MIN_INTERVAL_MS}: regular expressions are resolved again at most so often. */
    static final long REFRESH_INTERVAL_MS = 10_000L;
    /**
     * Kafka's default {@code group.consumer.regex.refresh.interval.ms} (an internal key Cairn does not read): regular
     * expressions older than this are resolved again even when no topic was created (a topic deleted, an ACL
     * changed).
     */
    static final long MAX_AGE_MS = 600_000L;

    private static final Logger LOGGER = LogManager.getLogger(RegularExpressions.class);

    private final ShardContext<CoordinatorRecord> ctx;
    private final Supplier<ConsumerGroupTopics> topics;

    RegularExpressions(ShardContext<CoordinatorRecord> ctx, Supplier<ConsumerGroupTopics> topics) {
        this.ctx = ctx;
        this.topics = topics;
    }

    /** Kafka's check of a regular expression a member subscribes to: it must compile as RE2J. */
    static void requireValid(String regex) {
        try {
            Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw Errors.INVALID_REGULAR_EXPRESSION.exception("SubscribedTopicRegex `" + regex
                + "` is not a valid regular expression: " + e.getDescription() + ".");
        }
    }

    /**
     * Kafka's {@code maybeUpdateRegularExpressions}, resolved at once rather than on a background executor: a member
     * that leaves a regular expression no one else subscribes to deletes its resolution; a member subscribing to a
     * new one resolves it; and every subscribed one is resolved again at least {@value #REFRESH_INTERVAL_MS} ms
     * after the last resolution when a topic was created since, when it is older than {@value #MAX_AGE_MS} ms,
     * or when one is not resolved. Returns whether what they match changed (the group epoch is bumped).
     */
    boolean update(ConsumerGroup group, String oldRegex, String newRegex, Predicate<String> describable,
                   List<CoordinatorRecord> records) {
        String groupId = group.groupId();
        boolean changed = false;
        if (!Objects.equals(oldRegex, newRegex)) {
            if (oldRegex != null && group.numSubscribedMembers(oldRegex) == 0
                    && group.resolvedRegularExpression(oldRegex) != null) {
                group.removeResolvedRegularExpression(oldRegex);
                records.add(ConsumerGroupRecords.regularExpressionTombstone(groupId, oldRegex));
            }
            if (newRegex != null && group.resolvedRegularExpression(newRegex) == null) {
                ConsumerGroup.ResolvedRegularExpression resolved = resolve(groupId, newRegex, topics.get(),
                    describable);
                group.setResolvedRegularExpression(newRegex, resolved);
                records.add(ConsumerGroupRecords.regularExpression(groupId, newRegex, resolved));
                changed = !resolved.topics().isEmpty();
            }
        }
        Set<String> regexes = group.subscribedRegularExpressions();
        ConsumerGroupTopics current = topics.get();
        long lastRefreshMs = group.lastRegexRefreshMs();
        boolean due = group.lastRegexVersion() < current.lastTopicCreationVersion()
            || ctx.nowMs() > lastRefreshMs + MAX_AGE_MS
            || regexes.size() != group.resolvedRegularExpressions().size();
        if (regexes.isEmpty() || ctx.nowMs() <= lastRefreshMs + REFRESH_INTERVAL_MS || !due) {
            return changed;
        }
        for (String regex : regexes.stream().sorted().toList()) {
            ConsumerGroup.ResolvedRegularExpression resolved = resolve(groupId, regex, current, describable);
            ConsumerGroup.ResolvedRegularExpression previous = group.resolvedRegularExpression(regex);
            changed |= previous == null || !previous.topics().equals(resolved.topics());
            group.setResolvedRegularExpression(regex, resolved);
            records.add(ConsumerGroupRecords.regularExpression(groupId, regex, resolved));
        }
        LOGGER.info("[GroupId {}] Refreshed regular expressions {}.", groupId, regexes);
        return changed;
    }

    /** The topics {@code regex} matches in full (Kafka's {@code Matcher.matches}) that the member may describe. */
    private ConsumerGroup.ResolvedRegularExpression resolve(String groupId, String regex, ConsumerGroupTopics current,
                                                            Predicate<String> describable) {
        Set<String> matched = new TreeSet<>();
        try {
            Pattern pattern = Pattern.compile(regex);
            for (String name : current.topicNames()) {
                if (pattern.matcher(name).matches() && describable.test(name)) {
                    matched.add(name);
                }
            }
        } catch (PatternSyntaxException e) {
            LOGGER.error("[GroupId {}] Couldn't parse regular expression '{}' due to `{}`. Ignoring it.", groupId,
                regex, e.getDescription());
        }
        return new ConsumerGroup.ResolvedRegularExpression(matched, current.version(), ctx.nowMs());
    }
}
