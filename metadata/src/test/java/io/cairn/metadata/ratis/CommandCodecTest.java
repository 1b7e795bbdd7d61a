package io.cairn.metadata.ratis;

import static org.assertj.core.api.Assertions.assertThat;

import io.cairn.metadata.TestRequests;
import io.cairn.metadata.image.MetadataRecords;
import io.cairn.metadata.record.ControllerChangeRecord;
import io.cairn.wire.message.BrokerRegistrationRequestData;
import io.cairn.wire.message.BrokerRegistrationResponseData;
import io.cairn.wire.protocol.ApiMessage;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The encodings of commands (with their request id) and of log entries (with a command's id and response). */
class CommandCodecTest {

    @Test
    void aCommandCarriesItsRequestIdAndRequest() {
        // Given
        UUID id = UUID.randomUUID();
        BrokerRegistrationRequestData request = TestRequests.registration(3, "r1");

        // When
        CommandCodec.Command decoded = CommandCodec.decodeCommand(CommandCodec.encodeCommand(id, request));

        // Then
        assertThat(decoded.requestId()).isEqualTo(id);
        assertThat(decoded.request()).isEqualTo(request);
    }

    @Test
    void aCommandEntryCarriesItsRequestIdAndResponseAndAPlainBatchNeither() {
        // Given
        UUID id = UUID.randomUUID();
        List<ApiMessage> records = List.of(new ControllerChangeRecord().setControllerId(1).setTerm(4));
        byte[] batch = MetadataRecords.encode(records);
        BrokerRegistrationResponseData response = new BrokerRegistrationResponseData().setBrokerEpoch(7);

        // When
        CommandCodec.Entry command = CommandCodec.decodeEntry(CommandCodec.encodeEntry(id, response, batch));
        CommandCodec.Entry plain = CommandCodec.decodeEntry(batch);

        // Then
        assertThat(command.requestId()).isEqualTo(id);
        assertThat(command.response()).isEqualTo(response);
        assertThat(MetadataRecords.decode(command.records())).isEqualTo(records);
        assertThat(plain.requestId()).isNull();
        assertThat(plain.response()).isNull();
        assertThat(MetadataRecords.decode(plain.records())).isEqualTo(records);
    }
}
