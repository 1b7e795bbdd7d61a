/**
 * The build-time generator of Cairn's protocol classes: {@link io.cairn.codegen.Main} reads Kafka's JSON message
 * schemas into the {@code schema} model and writes Java sources with the {@code emit} emitters. Never on a runtime
 * classpath.
 */
package io.cairn.codegen;
