package io.cairn.metadata.controller;

import java.util.Optional;

/**
 * Kafka's topic-name rules and their error messages (INVALID_TOPIC_EXCEPTION). Stateless, thread-safe.
 */
public final class TopicNames {

    /** The longest legal topic name. */
    public static final int MAX_LENGTH = 249;

    private TopicNames() {
    }

    /** The reason the name is illegal, with Kafka's wording, or empty when it is legal. */
    public static Optional<String> validate(String name) {
        if (name == null || name.isEmpty()) {
            return Optional.of("Topic name is illegal, it can't be empty");
        }
        if (name.equals(".") || name.equals("..")) {
            return Optional.of("Topic name cannot be \".\" or \"..\"");
        }
        if (name.length() > MAX_LENGTH) {
            return Optional.of("Topic name is illegal, it can't be longer than " + MAX_LENGTH
                    + " characters, topic name: " + name);
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            if (!legal) {
                return Optional.of("Topic name \"" + name + "\" is illegal, it contains a character other than "
                        + "ASCII alphanumerics, '.', '_' and '-'");
            }
        }
        return Optional.empty();
    }

    /**
     * The reason the name is illegal in the wording of Kafka's {@code Topic.validate} (which request handlers such as
     * DescribeProducers use, where the controller's checks above have their own wording), or empty when it is legal.
     */
    public static Optional<String> validateForRequest(String name) {
        String reason = null;
        if (name == null || name.isEmpty()) {
            reason = "the empty string is not allowed";
        } else if (name.equals(".")) {
            reason = "'.' is not allowed";
        } else if (name.equals("..")) {
            reason = "'..' is not allowed";
        } else if (name.length() > MAX_LENGTH) {
            reason = "the length of '" + name + "' is longer than the max allowed length " + MAX_LENGTH;
        } else if (validate(name).isPresent()) {
            reason = "'" + name + "' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'";
        }
        return Optional.ofNullable(reason).map(r -> "Topic name is invalid: " + r);
    }

    /** The name with '.' replaced by '_': two topics whose names differ only there collide in metric names. */
    public static String unifyCollisionChars(String name) {
        return name.replace('.', '_');
    }
}
