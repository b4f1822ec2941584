namespace Broker.Abstractions;

/// <summary>A copy of a reply received by <see cref="IBusClient.RequestAsync"/>.</summary>
/// <param name="Subject">The subject the reply was published to.</param>
/// <param name="Headers">The NATS header block, or empty.</param>
/// <param name="Payload">The payload.</param>
public sealed record BusReply(string Subject, ReadOnlyMemory<byte> Headers, ReadOnlyMemory<byte> Payload);
