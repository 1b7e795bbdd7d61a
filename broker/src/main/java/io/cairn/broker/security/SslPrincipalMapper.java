package io.cairn.broker.security;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * {@code ssl.principal.mapping.rules}: how a TLS client's certificate distinguished name (RFC 2253 form, e.g.
 * {@code CN=alice,OU=Eng,O=Example}) becomes its principal name, with Kafka's syntax and semantics. The rules are a
 * comma-separated list, tried in order; the first that applies gives the name:
 * <ul>
 *   <li>{@code DEFAULT} applies to every name and keeps it as it is;</li>
 *   <li>{@code RULE:pattern/replacement/} applies when the Java regular expression {@code pattern} matches the whole
 *   name, and gives the name with every match of the pattern replaced by {@code replacement} ({@code $1} ...
 *   back-references; a reference to a group the pattern lacks stays literal); a trailing {@code L} or {@code U}
 *   lower- or upper-cases the result. A {@code /} inside the pattern or replacement is escaped as {@code \/}.</li>
 * </ul>
 * Empty list entries are skipped; when no rule applies the connection cannot be authenticated.
 *
 * <p>Immutable and thread-safe.
 */
public final class SslPrincipalMapper {

    private final List<Rule> rules;

    private SslPrincipalMapper(List<Rule> rules) {
        this.rules = rules;
    }

    /**
     * Parses {@code rules} (null means {@code DEFAULT}).
     *
     * @throws IllegalArgumentException naming the rule that is not valid
     */
    public static SslPrincipalMapper fromRules(String rules) {
        return new SslPrincipalMapper(parse(rules == null ? "DEFAULT" : rules));
    }

    /**
     * The principal name of {@code distinguishedName}.
     *
     * @throws NoMatchingRuleException when no rule applies
     */
    public String name(String distinguishedName) throws NoMatchingRuleException {
        for (Rule rule : rules) {
            String name = rule.apply(distinguishedName);
            if (name != null) {
                return name;
            }
        }
        throw new NoMatchingRuleException("No rules apply to " + distinguishedName + ", rules " + rules);
    }

    @Override
    public String toString() {
        return "SslPrincipalMapper(rules = " + rules + ")";
    }

    private static List<Rule> parse(String text) {
        List<Rule> parsed = new ArrayList<>();
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (c == ',' || Character.isWhitespace(c)) {
                i++;
                continue;
            }
            int start = i;
            Rule rule;
            if (text.startsWith("DEFAULT", i)) {
                rule = Rule.DEFAULT;
                i += "DEFAULT".length();
            } else if (text.startsWith("RULE:", i)) {
                i += "RULE:".length();
                int patternEnd = unescapedSlash(text, i);
                int replacementEnd = patternEnd < 0 ? -1 : unescapedSlash(text, patternEnd + 1);
                if (replacementEnd < 0) {
                    throw invalid(text, start);
                }
                String pattern = text.substring(i, patternEnd);
                String replacement = text.substring(patternEnd + 1, replacementEnd);
                i = replacementEnd + 1;
                char flag = i < n ? text.charAt(i) : ' ';
                if (flag == 'L' || flag == 'U') {
                    i++;
                }
                try {
                    rule = new Rule(Pattern.compile(pattern), pattern, replacement, flag == 'L', flag == 'U');
                } catch (PatternSyntaxException e) {
                    throw new IllegalArgumentException("Invalid rule: " + text.substring(start, i) + ": "
                            + e.getDescription(), e);
                }
            } else {
                throw invalid(text, start);
            }
            while (i < n && Character.isWhitespace(text.charAt(i))) {
                i++;
            }
            if (i < n && text.charAt(i) != ',') {
                throw invalid(text, start);
            }
            parsed.add(rule);
        }
        return List.copyOf(parsed);
    }

    /** The index of the first {@code /} at or after {@code from} not escaped by a backslash, or -1. */
    private static int unescapedSlash(String text, int from) {
        for (int i = from; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == '/') {
                return i;
            }
        }
        return -1;
    }

    private static IllegalArgumentException invalid(String text, int start) {
        int end = text.indexOf(',', start);
        return new IllegalArgumentException("Invalid rule: " + text.substring(start, end < 0 ? text.length() : end)
                .trim());
    }

    /** The name could not be mapped: no rule applies to it. */
    public static final class NoMatchingRuleException extends Exception {

        private static final long serialVersionUID = 1L;

        NoMatchingRuleException(String message) {
            super(message);
        }
    }

    /** One rule; {@link #DEFAULT} keeps the name. */
    private static final class Rule {

        static final Rule DEFAULT = new Rule(null, null, null, false, false);

        private final Pattern pattern;
        private final String patternText;
        private final String replacement;
        private final boolean lowerCase;
        private final boolean upperCase;

        Rule(Pattern pattern, String patternText, String replacement, boolean lowerCase, boolean upperCase) {
            this.pattern = pattern;
            this.patternText = patternText;
            this.replacement = replacement;
            this.lowerCase = lowerCase;
            this.upperCase = upperCase;
        }

        /** The mapped name, or null when this rule does not apply. */
        String apply(String name) {
            if (pattern == null) {
                return name;
            }
            Matcher matcher = pattern.matcher(name);
            if (!matcher.matches()) {
                return null;
            }
            String result = pattern.matcher(name).replaceAll(literalMissingGroups(replacement,
                    matcher.groupCount()));
            if (lowerCase) {
                return result.toLowerCase(Locale.ENGLISH);
            }
            return upperCase ? result.toUpperCase(Locale.ENGLISH) : result;
        }

        /**
         * The replacement with every {@code $n} whose group the pattern lacks escaped, so it stays literal text (a
         * longer reference such as {@code $12} with one group reads as group 1 and a literal 2, as Java does).
         */
        private static String literalMissingGroups(String replacement, int groups) {
            if (groups == 0) {
                return replacement;
            }
            StringBuilder out = new StringBuilder(replacement.length() + 4);
            for (int i = 0; i < replacement.length(); i++) {
                char c = replacement.charAt(i);
                if (c == '$' && i + 1 < replacement.length()) {
                    char digit = replacement.charAt(i + 1);
                    if (digit >= '1' && digit <= '9' && digit - '0' > groups) {
                        out.append('\\');
                    }
                }
                out.append(c);
            }
            return out.toString();
        }

        @Override
        public String toString() {
            if (pattern == null) {
                return "DEFAULT";
            }
            return "RULE:" + patternText + "/" + replacement + (lowerCase ? "/L" : upperCase ? "/U" : "");
        }
    }
}
