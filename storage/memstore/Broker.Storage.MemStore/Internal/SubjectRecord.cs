using System.Text;

namespace Broker.Storage.MemStore.Internal;

/// <summary>
/// One subject of a stream: its bytes, shared by every message stored on it, and its state (nats-server's per-subject
/// <c>SimpleState</c> with the lazily recomputed first and last sequences).
/// </summary>
internal sealed class SubjectRecord(byte[] subject)
{
    private string? text;

    public byte[] Subject { get; } = subject;

    public ulong Messages;
    public ulong First;
    public ulong Last;

    // Set when the first (last) message was removed and the new one is not known yet; found by scanning on demand.
    public bool FirstNeedsUpdate;
    public bool LastNeedsUpdate;

    public string Text => text ??= Encoding.UTF8.GetString(Subject);
}

/// <summary>One stored message: its subject record and a pooled buffer holding headers then payload.</summary>
internal readonly struct MessageEntry(SubjectRecord subject, byte[] data, int headersLength, int payloadLength, long timestamp)
{
    public SubjectRecord Subject { get; } = subject;

    public byte[] Data { get; } = data;

    public int HeadersLength { get; } = headersLength;

    public int PayloadLength { get; } = payloadLength;

    public long Timestamp { get; } = timestamp;

    /// <summary>nats-server's memory store accounting: subject, headers and payload plus 16 bytes (sequence and time).</summary>
    public ulong Size => (ulong)(Subject.Subject.Length + HeadersLength + PayloadLength + 16);
}
