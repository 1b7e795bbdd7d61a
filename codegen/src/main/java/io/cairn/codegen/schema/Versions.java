package io.cairn.codegen.schema;

/**
 * An inclusive range of message versions as written in a schema: {@code "3+"}, {@code "0-2"}, {@code "5"} or
 * {@code "none"}. A range whose lowest is above its highest is empty. Immutable and thread-safe.
 */
public record Versions(short lowest, short highest) {

    /** The empty range, written {@code "none"}. */
    public static final Versions NONE = new Versions((short) 0, (short) -1);

    /** Every version, {@code "0+"}. */
    public static final Versions ALL = new Versions((short) 0, Short.MAX_VALUE);

    /** Parses a schema version range; throws {@link SchemaException} for anything else. */
    public static Versions parse(String text) {
        String trimmed = text.trim();
        try {
            if (trimmed.equals("none")) {
                return NONE;
            }
            if (trimmed.endsWith("+")) {
                return new Versions(shortOf(trimmed.substring(0, trimmed.length() - 1)), Short.MAX_VALUE);
            }
            int dash = trimmed.indexOf('-');
            if (dash > 0) {
                Versions range = new Versions(shortOf(trimmed.substring(0, dash)),
                        shortOf(trimmed.substring(dash + 1)));
                if (range.isEmpty()) {
                    throw new SchemaException("Invalid version range '" + text + "': lowest is above highest");
                }
                return range;
            }
            short single = shortOf(trimmed);
            return new Versions(single, single);
        } catch (NumberFormatException e) {
            throw new SchemaException("Invalid version range '" + text + "'");
        }
    }

    private static short shortOf(String text) {
        short value = Short.parseShort(text.trim());
        if (value < 0) {
            throw new NumberFormatException("negative version");
        }
        return value;
    }

    public boolean isEmpty() {
        return lowest > highest;
    }

    public boolean contains(short version) {
        return version >= lowest && version <= highest;
    }

    /** True when every version of {@code other} is in this range (the empty range is in every range). */
    public boolean contains(Versions other) {
        return other.isEmpty() || (!isEmpty() && lowest <= other.lowest && other.highest <= highest);
    }

    public Versions intersect(Versions other) {
        Versions result = new Versions((short) Math.max(lowest, other.lowest),
                (short) Math.min(highest, other.highest));
        return result.isEmpty() ? NONE : result;
    }

    /** The smallest range holding both (the ranges need not touch). */
    public Versions hull(Versions other) {
        if (isEmpty()) {
            return other;
        }
        if (other.isEmpty()) {
            return this;
        }
        return new Versions((short) Math.min(lowest, other.lowest), (short) Math.max(highest, other.highest));
    }

    /** True when the range has a lowest but no highest, like {@code "3+"}. */
    public boolean isOpenEnded() {
        return !isEmpty() && highest == Short.MAX_VALUE;
    }

    @Override
    public String toString() {
        if (isEmpty()) {
            return "none";
        }
        if (highest == Short.MAX_VALUE) {
            return lowest + "+";
        }
        return lowest == highest ? Short.toString(lowest) : lowest + "-" + highest;
    }
}
