package io.cairn.codegen.schema;

import java.util.List;
import java.util.Map;

/**
 * One schema file: a request, a response, a header or a data structure, with its structs resolved.
 * Immutable and thread-safe.
 *
 * @param name the schema name ({@code ApiVersionsRequest})
 * @param type {@code request}, {@code response}, {@code header} or {@code data}
 * @param apiKey the API key, or null for headers and data
 * @param validVersions the versions the schema defines
 * @param flexibleVersions the versions using compact encodings and tagged fields
 * @param fields the top-level fields
 * @param structs every struct of the message by name, in definition order (inline and common)
 * @param listeners the listeners that serve the API ({@code broker}, {@code controller}), empty if not given
 * @param latestVersionUnstable whether the highest valid version is still in development
 * @param topLevelVersions the versions top-level version conditions are computed against
 */
public record MessageSpec(String name, String type, Short apiKey, Versions validVersions, Versions flexibleVersions,
        List<FieldSpec> fields, Map<String, StructSpec> structs, List<String> listeners,
        boolean latestVersionUnstable, Versions topLevelVersions) {

    public MessageSpec {
        fields = List.copyOf(fields);
        listeners = List.copyOf(listeners);
    }

    /**
     * The generated Java class name, as Kafka names it: requests, responses and headers get a {@code Data} suffix
     * ({@code ApiVersionsRequestData}), data schemas keep their name ({@code LeaderChangeMessage}).
     */
    public String className() {
        return "data".equals(type) ? name : name + "Data";
    }

    public boolean isRequest() {
        return "request".equals(type);
    }

    public boolean isResponse() {
        return "response".equals(type);
    }

    /** The API name shared by a request and its response ({@code ApiVersions}). */
    public String apiName() {
        if (isRequest() && name.endsWith("Request")) {
            return name.substring(0, name.length() - "Request".length());
        }
        if (isResponse() && name.endsWith("Response")) {
            return name.substring(0, name.length() - "Response".length());
        }
        return name;
    }
}
