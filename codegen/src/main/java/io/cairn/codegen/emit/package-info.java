/**
 * Java source emitters: {@link io.cairn.codegen.emit.MessageClassEmitter} (one class per schema),
 * {@link io.cairn.codegen.emit.ApiKeyEmitter} (the API enum), on top of {@link io.cairn.codegen.emit.CodeBuffer}
 * and {@link io.cairn.codegen.emit.VersionCondition}.
 */
package io.cairn.codegen.emit;
