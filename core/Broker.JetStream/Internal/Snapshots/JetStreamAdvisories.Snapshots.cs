using System.Buffers;
using System.Text;
using System.Text.Json;
using Broker.JetStream.Internal.Json;
using Broker.JetStream.Internal.Models;

namespace Broker.JetStream.Internal.Events;

/// <summary>
/// The snapshot and restore advisories (nats-server <c>jetstream_events.go</c>): <c>STREAM.SNAPSHOT_CREATE</c>
/// (<c>snapshot_create</c>, with the state snapshotted), <c>STREAM.SNAPSHOT_COMPLETE</c> (<c>snapshot_complete</c>, start
/// and end), <c>STREAM.RESTORE_CREATE</c> (<c>restore_create</c>) and <c>STREAM.RESTORE_COMPLETE</c>
/// (<c>restore_complete</c>, start, end and the bytes received), each with the requester as <c>client</c>.
/// </summary>
internal sealed partial class JetStreamAdvisories
{
    public void SnapshotCreate(string stream, StreamStateModel state, byte[] requestHeaders) =>
        Snapshot("SNAPSHOT_CREATE", "snapshot_create", stream, requestHeaders, writer =>
        {
            writer.WritePropertyName("state");
            writer.WriteRawValue(JsonSerializer.SerializeToUtf8Bytes(state, JetStreamJson.Context.StreamStateModel));
        });

    public void SnapshotComplete(string stream, long start, long end, byte[] requestHeaders) =>
        Snapshot("SNAPSHOT_COMPLETE", "snapshot_complete", stream, requestHeaders, writer => WriteSpan(writer, start, end));

    public void RestoreCreate(string stream, byte[] requestHeaders) =>
        Snapshot("RESTORE_CREATE", "restore_create", stream, requestHeaders, null);

    public void RestoreComplete(string stream, long start, long end, long bytes, byte[] requestHeaders) =>
        Snapshot("RESTORE_COMPLETE", "restore_complete", stream, requestHeaders, writer =>
        {
            WriteSpan(writer, start, end);
            writer.WriteNumber("bytes", bytes);
        });

    private static void WriteSpan(Utf8JsonWriter writer, long start, long end)
    {
        writer.WriteString("start", GoTime.Format(start));
        writer.WriteString("end", GoTime.Format(end));
    }

    private void Snapshot(string token, string type, string stream, byte[] requestHeaders, Action<Utf8JsonWriter>? fields)
    {
        var subject = Encoding.UTF8.GetBytes(Prefix + "STREAM." + token + "." + stream);
        if (!Listened(subject))
        {
            return;
        }

        var buffer = new ArrayBufferWriter<byte>(512);
        var writer = AdvisoryJson.Begin(buffer, "io.nats.jetstream.advisory.v1." + type);
        writer.WriteString("stream", stream);
        // nats-server's field order: the state (snapshot_create) or start and end (and bytes) before the client.
        fields?.Invoke(writer);
        writer.WritePropertyName("client");
        WriteClient(writer, requestHeaders);
        publish(subject, AdvisoryJson.End(writer, buffer, domain));
    }
}
