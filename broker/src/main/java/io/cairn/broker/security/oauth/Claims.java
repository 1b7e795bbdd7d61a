package io.cairn.broker.security.oauth;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reading typed claims out of a JWT's claims set, with Kafka's messages ({@code ClaimValidationUtils}).
 *
 * <p>Stateless and thread-safe.
 */
final class Claims {

    private Claims() {
    }

    /** A NumericDate claim (seconds since the epoch, maybe fractional) in milliseconds, or null when absent. */
    static Long numericDateMs(Map<String, Object> claims, String name) throws TokenValidationException {
        Object value = claims.get(name);
        if (value == null || value == Json.NULL) {
            return null;
        }
        if (!(value instanceof Number number)) {
            throw new TokenValidationException("The '" + name + "' claim is not a NumericDate: "
                    + Json.shorten(String.valueOf(value)));
        }
        double seconds = number.doubleValue();
        if (seconds < 0) {
            throw new TokenValidationException(name + " value must be non-negative; value given was \"" + value
                    + "\"");
        }
        if (seconds > Long.MAX_VALUE / 1000.0) {
            return Long.MAX_VALUE;
        }
        return value instanceof Long l ? l * 1000 : Math.round(seconds * 1000);
    }

    /** A string claim, trimmed; absent, empty or blank is refused. */
    static String requiredString(Map<String, Object> claims, String name) throws TokenValidationException {
        Object value = claims.get(name);
        if (value == null || value == Json.NULL) {
            throw new TokenValidationException(name + " value must be non-null");
        }
        if (!(value instanceof String s)) {
            throw new TokenValidationException("Could not extract the '" + name + "' claim from the access token");
        }
        if (s.isEmpty()) {
            throw new TokenValidationException(name + " value must be non-empty");
        }
        if (s.isBlank()) {
            throw new TokenValidationException(name + " value must not contain only whitespace");
        }
        return s.trim();
    }

    /**
     * The scope claim: a string is one scope (Kafka's secured validator) or, with {@code spaceDelimited}, a
     * space-delimited list (the unsecured one); an array is a list of strings; absent means no scope. Duplicates and
     * blank entries are refused in the secured form, as Kafka refuses them.
     */
    static Set<String> scope(Map<String, Object> claims, String name, boolean spaceDelimited)
            throws TokenValidationException {
        Object value = claims.get(name);
        Collection<?> raw;
        if (value instanceof String s) {
            raw = spaceDelimited ? splitSpaces(s) : List.of(s);
        } else if (value instanceof List<?> list) {
            raw = list;
        } else {
            return Set.of();
        }
        Set<String> scope = new LinkedHashSet<>();
        for (Object item : raw) {
            if (!(item instanceof String s) || s.isBlank()) {
                throw new TokenValidationException(name + " value must be non-empty strings");
            }
            if (!scope.add(s.trim()) && !spaceDelimited) {
                throw new TokenValidationException(name + " value must not contain duplicates - " + s.trim()
                        + " already present");
            }
        }
        return Collections.unmodifiableSet(scope);
    }

    private static List<String> splitSpaces(String value) {
        List<String> items = new ArrayList<>();
        for (String item : value.split(" ")) {
            if (!item.isEmpty()) {
                items.add(item);
            }
        }
        return items;
    }
}
