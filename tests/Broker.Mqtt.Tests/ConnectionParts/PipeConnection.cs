using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Connections;
using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Mqtt.Tests.ConnectionParts;

/// <summary>
/// A transport of two in-memory pipes, for the parts of an MQTT connection without a socket: the test writes what the
/// client sends and reads back the packets the broker wrote.
/// </summary>
internal sealed class PipeConnection : TransportConnection
{
    private readonly Pipe toBroker = new();
    private readonly Pipe fromBroker = new();

    public PipeConnection(TransportSettings? settings = null)
    {
        Transport = new DuplexPipe(toBroker.Reader, fromBroker.Writer);
        Settings = settings ?? new TransportSettings();
    }

    public override string ConnectionId => "pipe";

    public override IDuplexPipe Transport { get; set; }

    public override EndPoint? LocalEndPoint => null;

    public override EndPoint? RemoteEndPoint => null;

    public override TransportSettings Settings { get; }

    public override CancellationToken ConnectionClosed => CancellationToken.None;

    /// <summary>The reason of the last <see cref="Abort"/>, or <see langword="null"/>.</summary>
    public string? Aborted { get; private set; }

    /// <summary>What the client sends.</summary>
    public PipeWriter ClientOutput => toBroker.Writer;

    public override void Abort(string reason) => Aborted = reason;

    public override ValueTask DisposeAsync() => ValueTask.CompletedTask;

    /// <summary>The status, output and session of a connected client, as the connection wires them.</summary>
    public (ConnectionStatus Status, PacketOutput Output) Parts()
    {
        var status = new ConnectionStatus(this);
        return (status, new PacketOutput(this, status, Microsoft.Extensions.Logging.Abstractions.NullLogger.Instance));
    }

    /// <summary>The packets written and flushed so far, each as its fixed header byte and body in hex; none when nothing came.</summary>
    public List<(byte Header, string Body)> Sent()
    {
        var packets = new List<(byte, string)>();
        if (!fromBroker.Reader.TryRead(out var result))
        {
            return packets;
        }

        var bytes = result.Buffer.ToArray();
        fromBroker.Reader.AdvanceTo(result.Buffer.End);
        var at = 0;
        while (at < bytes.Length)
        {
            var header = bytes[at++];
            int length = 0, shift = 0;
            byte next;
            do
            {
                next = bytes[at++];
                length |= (next & 0x7F) << shift;
                shift += 7;
            }
            while ((next & 0x80) != 0);
            packets.Add((header, Convert.ToHexString(bytes, at, length)));
            at += length;
        }

        return packets;
    }

    /// <summary>Reads and drops what was flushed so far, allocating nothing.</summary>
    public void Drain()
    {
        if (fromBroker.Reader.TryRead(out var result))
        {
            fromBroker.Reader.AdvanceTo(result.Buffer.End);
        }
    }

    /// <summary>Flushes <paramref name="output"/> and returns what it sent.</summary>
    public List<(byte Header, string Body)> Sent(PacketOutput output)
    {
        output.Flush();
        return Sent();
    }

    private sealed class DuplexPipe(PipeReader input, PipeWriter output) : IDuplexPipe
    {
        public PipeReader Input => input;

        public PipeWriter Output => output;
    }
}

/// <summary>A session store whose QoS 2 records complete when the test says so.</summary>
internal sealed class ControlledSessionStore : ISessionStore
{
    public List<(string Operation, ushort PacketId, TaskCompletionSource Done)> Calls { get; } = [];

    /// <summary>Whether the QoS 2 record operations complete at once (else they wait in <see cref="Calls"/>).</summary>
    public bool Immediate { get; set; } = true;

    public int Saves { get; private set; }

    public ValueTask<SessionRecord?> LoadAsync(string clientId, CancellationToken cancellationToken) => ValueTask.FromResult<SessionRecord?>(null);

    public ValueTask SaveAsync(SessionRecord record, CancellationToken cancellationToken)
    {
        Saves++;
        return ValueTask.CompletedTask;
    }

    public ValueTask DeleteAsync(string clientId, CancellationToken cancellationToken) => ValueTask.CompletedTask;

    public bool HoldsQos2 => true;

    public Task HoldAsync(string clientId, HeldPublish held) => Record("hold", held.PacketId);

    public Task ReleaseAsync(string clientId, HeldPublish held) => Record("release", held.PacketId);

    public ValueTask<IReadOnlyCollection<HeldPublish>> LoadHeldAsync(string clientId, CancellationToken cancellationToken)
        => ValueTask.FromResult<IReadOnlyCollection<HeldPublish>>([]);

    private Task Record(string operation, ushort packetId)
    {
        if (Immediate)
        {
            return Task.CompletedTask;
        }

        var done = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        Calls.Add((operation, packetId, done));
        return done.Task;
    }
}
