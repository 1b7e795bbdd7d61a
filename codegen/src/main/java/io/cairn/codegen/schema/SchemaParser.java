package io.cairn.codegen.schema;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns the text of one schema file (JSON with {@code //} comments, the format of Kafka's
 * {@code common/message/README.md}) into a validated {@link MessageSpec}. Stateless and thread-safe.
 */
public final class SchemaParser {

    private static final ObjectMapper MAPPER = new ObjectMapper().enable(JsonParser.Feature.ALLOW_COMMENTS);

    private static final Set<String> MESSAGE_KEYS = Set.of("apiKey", "type", "name", "validVersions",
            "flexibleVersions", "fields", "commonStructs", "listeners", "latestVersionUnstable");
    private static final Set<String> FIELD_KEYS = Set.of("name", "type", "versions", "about", "fields", "default",
            "entityType", "nullableVersions", "ignorable", "mapKey", "taggedVersions", "tag", "zeroCopy",
            "flexibleVersions");
    private static final Set<String> STRUCT_KEYS = Set.of("name", "versions", "fields");
    private static final Set<String> MESSAGE_TYPES = Set.of("request", "response", "header", "data");

    /** Simple names the generated code imports; a struct must not shadow them. */
    private static final Set<String> RESERVED_STRUCT_NAMES = Set.of("List", "ArrayList", "Arrays", "Objects",
            "Uuid", "ByteBuf", "StandardCharsets", "RawTaggedField", "RawTaggedFields", "RawTaggedFieldWriter",
            "WireReader", "WireWriter", "SerializationCache", "SizeAccumulator", "Varints", "Message", "ApiMessage",
            "MessageDecodeException", "UnsupportedVersionException", "String", "Object", "Integer", "Long",
            "Short", "Byte", "Double", "Boolean");

    /** Parses and validates one schema; the exception message names the offending field. */
    public MessageSpec parse(String json) {
        JsonNode root;
        try {
            root = MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            throw new SchemaException("Invalid JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || !root.isObject()) {
            throw new SchemaException("A schema must be a JSON object");
        }
        checkKeys(root, MESSAGE_KEYS, "message");
        String name = requiredText(root, "name", "message");
        String type = requiredText(root, "type", name);
        if (!MESSAGE_TYPES.contains(type)) {
            throw new SchemaException(name + ": unknown message type '" + type + "'");
        }
        Short apiKey = root.has("apiKey") ? (short) root.get("apiKey").asInt() : null;
        if (apiKey == null && ("request".equals(type) || "response".equals(type))) {
            throw new SchemaException(name + ": a " + type + " needs an apiKey");
        }
        Versions valid = Versions.parse(requiredText(root, "validVersions", name));
        Versions flexible = root.has("flexibleVersions") ? Versions.parse(root.get("flexibleVersions").asText())
                : Versions.NONE;
        if (!flexible.isEmpty() && !flexible.isOpenEnded()) {
            throw new SchemaException(name + ": flexibleVersions must be open-ended, got " + flexible);
        }
        // Headers are read at versions below their validVersions too (request header v0 has no client id),
        // so their version conditions are computed from version 0.
        Versions topLevel = "header".equals(type) && !valid.isEmpty()
                ? new Versions((short) 0, valid.highest()) : valid;
        Context context = new Context(name, flexible);
        List<FieldSpec> fields = parseFields(root.get("fields"), context, name);
        parseCommonStructs(root.get("commonStructs"), context);
        Map<String, StructSpec> structs = context.resolveStructs(fields, topLevel);
        List<String> listeners = new ArrayList<>();
        if (root.has("listeners")) {
            root.get("listeners").forEach(node -> listeners.add(node.asText()));
        }
        boolean unstable = root.has("latestVersionUnstable") && root.get("latestVersionUnstable").asBoolean();
        return new MessageSpec(name, type, apiKey, valid, flexible, fields, structs, listeners, unstable, topLevel);
    }

    private List<FieldSpec> parseFields(JsonNode node, Context context, String owner) {
        List<FieldSpec> fields = new ArrayList<>();
        if (node == null) {
            return fields;
        }
        if (!node.isArray()) {
            throw new SchemaException(owner + ": 'fields' must be an array");
        }
        Set<String> names = new HashSet<>();
        Set<Integer> tags = new HashSet<>();
        for (JsonNode fieldNode : node) {
            FieldSpec field = parseField(fieldNode, context, owner);
            if (!names.add(field.name())) {
                throw new SchemaException(owner + ": duplicate field name '" + field.name() + "'");
            }
            if (field.isTagged() && !tags.add(field.tag())) {
                throw new SchemaException(owner + "." + field.name() + ": duplicate tag " + field.tag());
            }
            fields.add(field);
        }
        return fields;
    }

    private FieldSpec parseField(JsonNode node, Context context, String owner) {
        String name = requiredText(node, "name", owner + " field");
        String where = owner + "." + name;
        checkKeys(node, FIELD_KEYS, where);
        if (!Character.isLetter(name.charAt(0)) || !name.chars().allMatch(Character::isLetterOrDigit)) {
            throw new SchemaException(where + ": field names are letters and digits, starting with a letter");
        }
        FieldType type;
        try {
            type = FieldType.parse(requiredText(node, "type", where));
        } catch (SchemaException e) {
            throw new SchemaException(where + ": " + e.getMessage(), e);
        }
        Versions versions = Versions.parse(requiredText(node, "versions", where));
        Versions nullable = node.has("nullableVersions") ? Versions.parse(node.get("nullableVersions").asText())
                : Versions.NONE;
        if (!nullable.isEmpty() && !type.canBeNullable()) {
            throw new SchemaException(where + ": a " + type + " field cannot be nullable");
        }
        Versions tagged = node.has("taggedVersions") ? Versions.parse(node.get("taggedVersions").asText())
                : Versions.NONE;
        Integer tag = node.has("tag") ? node.get("tag").asInt() : null;
        checkTagged(where, versions, tagged, tag, context.flexibleVersions);
        Versions fieldFlexible = null;
        if (node.has("flexibleVersions")) {
            if (type.kind() != FieldType.Kind.STRING && type.kind() != FieldType.Kind.BYTES) {
                throw new SchemaException(where + ": only string and bytes fields may set flexibleVersions");
            }
            fieldFlexible = Versions.parse(node.get("flexibleVersions").asText());
        }
        boolean zeroCopy = node.has("zeroCopy") && node.get("zeroCopy").asBoolean();
        if (zeroCopy && type.kind() != FieldType.Kind.BYTES) {
            throw new SchemaException(where + ": zeroCopy is only for bytes fields");
        }
        String defaultValue = node.has("default") ? node.get("default").asText() : null;
        Defaults.validate(where, type, defaultValue, versions, nullable);
        List<FieldSpec> children = List.of();
        if (node.has("fields")) {
            if (type.referencedStruct() == null) {
                throw new SchemaException(where + ": only struct and struct array fields have 'fields'");
            }
            children = parseFields(node.get("fields"), context, owner + "." + type.referencedStruct());
            context.define(type.referencedStruct(), null, children, where);
        }
        FieldSpec field = new FieldSpec(name, type, versions, nullable, tagged, tag, fieldFlexible,
                node.has("ignorable") && node.get("ignorable").asBoolean(), defaultValue,
                node.has("about") ? node.get("about").asText() : "", children,
                node.has("mapKey") && node.get("mapKey").asBoolean(), zeroCopy,
                node.has("entityType") ? node.get("entityType").asText() : null);
        if (type.referencedStruct() != null) {
            context.reference(type.referencedStruct(), where);
        }
        return field;
    }

    private static void checkTagged(String where, Versions versions, Versions tagged, Integer tag,
            Versions flexible) {
        if (tag == null && tagged.isEmpty()) {
            return;
        }
        if (tag == null || tagged.isEmpty()) {
            throw new SchemaException(where + ": a tagged field needs both 'tag' and 'taggedVersions'");
        }
        if (tag < 0) {
            throw new SchemaException(where + ": tags are non-negative, got " + tag);
        }
        if (!tagged.isOpenEnded()) {
            throw new SchemaException(where + ": taggedVersions must be open-ended, got " + tagged);
        }
        if (!flexible.contains(tagged)) {
            throw new SchemaException(where + ": taggedVersions " + tagged + " are not all flexible versions ("
                    + flexible + ")");
        }
        if (!tagged.equals(versions)) {
            throw new SchemaException(where + ": versions " + versions + " must equal taggedVersions " + tagged
                    + " (fields that are tagged in some versions only are not supported)");
        }
    }

    private void parseCommonStructs(JsonNode node, Context context) {
        if (node == null) {
            return;
        }
        for (JsonNode structNode : node) {
            String name = requiredText(structNode, "name", context.messageName + " common struct");
            checkKeys(structNode, STRUCT_KEYS, context.messageName + "." + name);
            Versions versions = structNode.has("versions") ? Versions.parse(structNode.get("versions").asText())
                    : Versions.ALL;
            List<FieldSpec> fields = parseFields(structNode.get("fields"), context, context.messageName + "." + name);
            context.define(name, versions, fields, context.messageName + "." + name);
        }
    }

    private static void checkKeys(JsonNode node, Set<String> allowed, String where) {
        for (Iterator<String> it = node.fieldNames(); it.hasNext();) {
            String key = it.next();
            if (!allowed.contains(key)) {
                throw new SchemaException(where + ": unknown property '" + key + "'");
            }
        }
    }

    private static String requiredText(JsonNode node, String key, String where) {
        JsonNode value = node.get(key);
        if (value == null || value.isNull() || value.asText().isEmpty()) {
            throw new SchemaException(where + ": missing '" + key + "'");
        }
        return value.asText();
    }

    /** Struct definitions and references collected while parsing one message. Not thread-safe. */
    private static final class Context {
        private final String messageName;
        private final Versions flexibleVersions;
        private final Map<String, List<FieldSpec>> definitions = new LinkedHashMap<>();
        private final Map<String, Versions> declaredVersions = new HashMap<>();
        private final Map<String, String> firstReference = new LinkedHashMap<>();

        Context(String messageName, Versions flexibleVersions) {
            this.messageName = messageName;
            this.flexibleVersions = flexibleVersions;
        }

        void define(String struct, Versions versions, List<FieldSpec> fields, String where) {
            if (RESERVED_STRUCT_NAMES.contains(struct) || struct.equals(messageName + "Data")
                    || struct.equals(messageName)) {
                throw new SchemaException(where + ": struct name '" + struct + "' clashes with a generated name");
            }
            if (definitions.put(struct, fields) != null) {
                throw new SchemaException(where + ": struct '" + struct + "' is defined more than once");
            }
            declaredVersions.put(struct, versions == null ? Versions.ALL : versions);
        }

        void reference(String struct, String where) {
            firstReference.putIfAbsent(struct, where);
        }

        /** Checks every reference resolves, then computes each struct's versions (a fixpoint over uses). */
        Map<String, StructSpec> resolveStructs(List<FieldSpec> topFields, Versions topVersions) {
            for (Map.Entry<String, String> reference : firstReference.entrySet()) {
                if (!definitions.containsKey(reference.getKey())) {
                    throw new SchemaException(reference.getValue() + ": struct '" + reference.getKey()
                            + "' is neither defined inline nor in commonStructs");
                }
            }
            Map<String, Versions> used = new HashMap<>();
            propagate(topFields, topVersions, used);
            Map<String, StructSpec> result = new LinkedHashMap<>();
            for (Map.Entry<String, List<FieldSpec>> definition : definitions.entrySet()) {
                Versions versions = used.getOrDefault(definition.getKey(), declaredVersions.get(definition.getKey()));
                if (versions.isEmpty()) {
                    versions = declaredVersions.get(definition.getKey());
                }
                result.put(definition.getKey(), new StructSpec(definition.getKey(), versions, definition.getValue()));
            }
            return result;
        }

        private void propagate(List<FieldSpec> fields, Versions context, Map<String, Versions> used) {
            for (FieldSpec field : fields) {
                String struct = field.type().referencedStruct();
                if (struct == null) {
                    continue;
                }
                Versions reach = context.intersect(field.versions()).intersect(declaredVersions.get(struct));
                Versions before = used.getOrDefault(struct, Versions.NONE);
                Versions after = before.hull(reach);
                if (!after.equals(before)) {
                    used.put(struct, after);
                    propagate(definitions.get(struct), after, used);
                }
            }
        }
    }
}
