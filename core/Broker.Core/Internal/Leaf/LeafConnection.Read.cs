using System.Buffers;
using System.Buffers.Text;
using System.IO.Pipelines;
using System.Text;
using Broker.Core.Internal.Subscriptions;

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
            if (Stalls.Count > 0)
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
        if (!reader.TryReadTo(out ReadOnlySequence<byte> lineSequence, "\r\n"u8))
        {
            if (buffer.Length > maxLine)
            {
                throw new LeafProtocolException("Maximum Control Line Exceeded");
            }

            return false;
        }

        var line = lineSequence.IsSingleSegment ? lineSequence.FirstSpan : lineSequence.ToArray();
        Clients.LinkClient.SplitControlLine(line, out var op, out var args);
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
            ProcessInterest(args);
        }
        else if (Is(op, "LS-"u8))
        {
            ProcessInterestRemoved(args);
        }
        else if (Is(op, "INFO"u8))
        {
            ProcessInfo(args);
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
            remote?.DelayNextConnect(LoopReconnectDelay);
            LeafLog.LoopDetected(Server.Logger, LoopMessage());
            Close("Protocol Violation");
        }
    }

    private string LoopMessage() => $"Loop detected for leafnode account=\"{Account.Name}\". Delaying attempt to reconnect for {Monitoring.GoFormat.Duration(LoopReconnectDelay)}";

    // LS+ <subject> [<queue> <weight>]: the hub's interest, as a subscription of this link keyed by "subject [queue]".
    private void ProcessInterest(ReadOnlySpan<byte> args)
    {
        Span<Range> parts = stackalloc Range[4];
        var count = Protocol.ArgumentSplitter.Split(args, parts);
        if (count is not (1 or 3))
        {
            throw new LeafProtocolException($"processLeafSub Parse Error: '{Encoding.UTF8.GetString(args)}'");
        }

        var subject = args[parts[0]];
        if (subject.SequenceEqual(interest.LoopSubjectBytes))
        {
            // Our own loop detection subject came back: the hub reaches us twice (nats-server's handleLeafNodeLoop).
            var message = LoopMessage();
            remote?.DelayNextConnect(LoopReconnectDelay);
            LeafLog.LoopDetected(Server.Logger, message);
            Close("Protocol Violation", $"-ERR '{message}'\r\n");
            return;
        }

        // A spoke drops interest it may not serve (the hub told it its permissions); a hub closes the link that sent
        // it (leafSubPermViolation). $LDS. and _GR_ subjects always pass.
        var exempt = subject.StartsWith("$LDS."u8) || subject.StartsWith("$GR."u8) || subject.StartsWith("_GR_."u8);
        if (!exempt && !SubjectValidator.HasWildcard(subject) && !permissions.CanPublish(subject))
        {
            if (IsAccepted)
            {
                var error = $"Permissions Violation for Subscription to \"{Encoding.UTF8.GetString(subject)}\"";
                LeafLog.RemoteError(Server.Logger, Redacted, error);
                Close("Protocol Violation", $"-ERR '{error}'\r\n");
            }

            return;
        }

        var key = count == 1 ? subject : args[parts[0].Start..parts[1].End];
        var weight = 1;
        if (count == 3 && (!Utf8Parser.TryParse(args[parts[2]], out weight, out var consumed) || consumed != args[parts[2]].Length || weight < 0))
        {
            weight = 1;
        }

        var keyString = Encoding.UTF8.GetString(key);
        bool known;
        lock (weightsGate)
        {
            known = weights.ContainsKey(keyString);
            weights[keyString] = weight;
        }

        SetInterest(subject, count == 3 ? args[parts[1]] : default, key, weight, known);
        interest.LinkChanged(this, keyString);
    }

    /// <summary>The other side's weight for an interest key (1 for a plain subject), 0 when it has none.</summary>
    public int WeightOf(string key)
    {
        lock (weightsGate)
        {
            return weights.GetValueOrDefault(key);
        }
    }

    // LS- <subject> [<queue>]: the key exactly.
    private void ProcessInterestRemoved(ReadOnlySpan<byte> args)
    {
        var key = Encoding.UTF8.GetString(args);
        lock (weightsGate)
        {
            weights.Remove(key);
        }

        Unsubscribe(args, 0);
        interest.LinkChanged(this, key);
    }

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
