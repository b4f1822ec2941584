using System.Buffers;
using System.IO.Pipelines;
using System.Text;

namespace Broker.Core.Internal.Leaf;

/// <summary>
/// The hub's side of the link: control lines (INFO, PING, PONG, +OK, -ERR, LS+, LS-) and messages (LMSG, HMSG with
/// their queue lists), parsed as nats-server's <c>processLeafSub</c>, <c>processLeafUnsub</c>,
/// <c>processLeafMsgArgs</c> and <c>processLeafHeaderMsgArgs</c> read them.
/// </summary>
internal sealed partial class LeafConnection
{
    // nats-server's leafNodeReconnectDelayAfterLoopDetected.
    private static readonly TimeSpan LoopReconnectDelay = TimeSpan.FromSeconds(30);

    private LeafFanout? inbound;

    private async Task ReadLoopAsync(PipeReader reader)
    {
        var maxLine = Math.Max(Server.Options.MaxControlLine, 4096) * 16;
        while (!IsClosed)
        {
            var read = await reader.ReadAsync().ConfigureAwait(false);
            var buffer = read.Buffer;
            while (!IsClosed && TryProcessOne(ref buffer, maxLine))
            {
            }

            FlushPending();
            if (HasStalls)
            {
                await Task.WhenAny(Task.WhenAll(Stalls), Task.Delay(Clients.LinkClient.StallLimit)).ConfigureAwait(false);
                Stalls.Clear();
            }

            reader.AdvanceTo(buffer.Start, buffer.End);
            if (read.IsCompleted || read.IsCanceled)
            {
                return;
            }
        }
    }

    // Processes one complete operation at the start of the buffer; false when more input is needed.
    private bool TryProcessOne(ref ReadOnlySequence<byte> buffer, int maxLine)
    {
        var reader = new SequenceReader<byte>(buffer);
        if (!Clients.LinkClient.TryReadControlLine(ref reader, maxLine, out var tooLong, out var op, out var args))
        {
            return tooLong ? throw new LeafProtocolException("Maximum Control Line Exceeded") : false;
        }

        if (Is(op, "LMSG"u8) || Is(op, "HMSG"u8))
        {
            var message = LeafMessageLine.Parse(args, Is(op, "HMSG"u8));
            if (reader.Remaining < message.Size + 2)
            {
                return false;
            }

            var body = buffer.Slice(reader.Position, message.Size);
            ProcessMessage(message, args, body);
            buffer = buffer.Slice(buffer.GetPosition(message.Size + 2, reader.Position));
            return true;
        }

        buffer = buffer.Slice(reader.Position);
        if (Is(op, "PING"u8))
        {
            SendProtocol("PONG\r\n"u8);
        }
        else if (Is(op, "LS+"u8))
        {
            peer.Add(args);
        }
        else if (Is(op, "LS-"u8))
        {
            peer.Remove(args);
        }
        else if (Is(op, "INFO"u8))
        {
            // A 2.9 spoke sends no INFO (2.10+ ones only to negotiate compression, which the hub does not offer).
            handshake?.ProcessInfo(args);
        }
        else if (Is(op, "-ERR"u8))
        {
            ProcessError(Encoding.UTF8.GetString(args));
        }
        else if (Is(op, "PONG"u8))
        {
            ProcessPong();
        }
        else if (!Is(op, "+OK"u8) && !op.IsEmpty)
        {
            throw new LeafProtocolException("Unknown Protocol Operation");
        }

        return true;
    }

    private static bool Is(ReadOnlySpan<byte> op, ReadOnlySpan<byte> name) => Ascii.EqualsIgnoreCase(op, name);

    private void ProcessError(string error)
    {
        LeafLog.RemoteError(Server.Logger, Redacted, error);
        if (error.Contains("Loop detected", StringComparison.Ordinal))
        {
            // The hub saw our loop subject come back (nats-server's leafProcessErr): wait before trying again.
            LoopDetected(sendError: false);
        }
    }

    /// <summary>
    /// A loop: our loop detection subject came back (<paramref name="sendError"/>: we tell the other side) or the other
    /// side saw it; the link closes and a remote waits before it tries again.
    /// </summary>
    internal void LoopDetected(bool sendError)
    {
        var message = LoopMessage();
        remote?.DelayNextConnect(LoopReconnectDelay);
        LeafLog.LoopDetected(Server.Logger, message);
        Close("Protocol Violation", sendError ? $"-ERR '{message}'\r\n" : null);
    }

    private string LoopMessage() => $"Loop detected for leafnode account=\"{Account.Name}\". Delaying attempt to reconnect for {Monitoring.GoFormat.Duration(LoopReconnectDelay)}";

    private static ReadOnlySpan<byte> JetStreamAckPrefix => "$JS.ACK."u8;

    // A message from the hub: published in the account to local subscribers, the named queue groups served once.
    private void ProcessMessage(LeafMessageLine message, ReadOnlySpan<byte> args, in ReadOnlySequence<byte> body)
    {
        var subject = args[message.Subject];
        var reply = args[message.Reply];
        var deliverAs = subject;
        int at;
        if (reply.StartsWith(JetStreamAckPrefix) && (at = reply.LastIndexOf((byte)'@')) >= 0 && at < reply.Length - 1)
        {
            // A JetStream delivery under its stored subject travels as reply@subject (nats-server's processMsgResults):
            // matched by the deliver subject, delivered as the stored one.
            deliverAs = reply[(at + 1)..];
            reply = reply[..at];
        }

        var headers = body.Slice(0, message.HeaderSize);
        var payload = body.Slice(message.HeaderSize);
        InMessages++;
        InBytes += message.Size;
        Server.Statistics.AddIn(1, message.Size);
        var result = Account.SubList.Match(subject);
        if (result.IsEmpty)
        {
            return;
        }

        var delivered = (inbound ??= new LeafFanout(this)).DeliverFromLink(result, subject, deliverAs, reply, headers, payload, args[message.Queues]);
        CountDelivered(delivered, message.Size);
    }
}
