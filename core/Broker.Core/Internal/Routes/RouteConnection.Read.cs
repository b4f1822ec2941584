using System.Buffers;
using System.Buffers.Text;
using System.IO.Pipelines;
using System.Text;
using System.Text.Json;
using Broker.Core.Internal.Leaf;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// The member's side of the route: CONNECT (accepted routes), INFO, PING, PONG, +OK, -ERR, RS+, RS- and messages
/// (RMSG, HMSG with their queue lists), parsed as nats-server's <c>processRouteConnect</c>, <c>processRemoteSub</c>,
/// <c>processRemoteUnsub</c>, <c>processRoutedMsgArgs</c> and <c>processRoutedHeaderMsgArgs</c> read them.
/// </summary>
internal sealed partial class RouteConnection
{
    // The account links that published during the current read batch, flushed once at its end.
    private readonly List<RouteAccountLink> producers = [];

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

            foreach (var producer in producers)
            {
                producer.FlushPending();
                if (producer.HasStalls)
                {
                    await Task.WhenAny(Task.WhenAll(producer.Stalls), Task.Delay(Clients.LinkClient.StallLimit)).ConfigureAwait(false);
                    producer.Stalls.Clear();
                }
            }

            producers.Clear();
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
            return tooLong ? throw new RouteProtocolException("Maximum Control Line Exceeded") : false;
        }

        if (!connectReceived && !solicited && !Is(op, "CONNECT"u8))
        {
            // An accepted route starts with CONNECT (nats-server's expectConnect); anything else is refused.
            Refuse("Authorization Violation", "Authorization Violation");
            return false;
        }

        if (Is(op, "RMSG"u8) || Is(op, "HMSG"u8))
        {
            var accountEnd = args.IndexOf((byte)' ');
            if (accountEnd < 0)
            {
                throw new RouteProtocolException("processRoutedMsgArgs Parse Error: '" + Encoding.UTF8.GetString(args) + "'");
            }

            var rest = args[(accountEnd + 1)..].TrimStart((byte)' ');
            var message = LeafMessageLine.Parse(rest, Is(op, "HMSG"u8));
            if (reader.Remaining < message.Size + 2)
            {
                return false;
            }

            var body = buffer.Slice(reader.Position, message.Size);
            if (registered && LinkOf(args[..accountEnd]) is { } link)
            {
                link.Publish(rest[message.Subject], rest[message.Reply], body.Slice(0, message.HeaderSize), body.Slice(message.HeaderSize), rest[message.Queues]);
                if (!producers.Contains(link))
                {
                    producers.Add(link);
                }
            }

            buffer = buffer.Slice(buffer.GetPosition(message.Size + 2, reader.Position));
            return true;
        }

        buffer = buffer.Slice(reader.Position);
        if (Is(op, "PING"u8))
        {
            SendProtocol("PONG\r\n"u8);
        }
        else if (Is(op, "PONG"u8))
        {
            ProcessPong();
        }
        else if (Is(op, "RS+"u8))
        {
            ProcessInterest(args);
        }
        else if (Is(op, "RS-"u8))
        {
            ProcessInterestRemoved(args);
        }
        else if (Is(op, "INFO"u8))
        {
            ProcessInfo(args);
        }
        else if (Is(op, "CONNECT"u8))
        {
            ProcessConnect(args);
        }
        else if (Is(op, "-ERR"u8))
        {
            RouteLog.Refused(Server.Logger, Name, Id, "Remote error: " + Encoding.UTF8.GetString(args));
        }
        else if (!Is(op, "+OK"u8) && !op.IsEmpty)
        {
            throw new RouteProtocolException("Unknown Protocol Operation");
        }

        return true;
    }

    private static bool Is(ReadOnlySpan<byte> op, ReadOnlySpan<byte> name) => Ascii.EqualsIgnoreCase(op, name);

    // processRouteConnect: a client (lang) or a gateway on the route port is refused, then credentials, then the name.
    private void ProcessConnect(ReadOnlySpan<byte> json)
    {
        var connect = JsonSerializer.Deserialize(json, RouteJsonContext.Default.RouteConnect) ?? throw new RouteProtocolException("empty CONNECT");
        if (solicited || connectReceived)
        {
            return;
        }

        if (!string.IsNullOrEmpty(connect.Lang))
        {
            Refuse("attempted to connect to route port", "attempted to connect to route port");
            return;
        }

        if (connect.Gateway is { Length: > 0 } gateway)
        {
            var text = $"Rejecting connection from gateway \"{gateway}\" on the Route port";
            Refuse(text, text);
            return;
        }

        if (!cluster.Authenticate(connect.User, connect.Password))
        {
            Refuse("Authorization Violation", "Authorization Violation");
            return;
        }

        if (!cluster.AgreeOnName(connect.Cluster, connect.Dynamic, this))
        {
            var text = $"Rejecting connection, cluster name \"{connect.Cluster}\" does not match \"{cluster.Name}\"";
            Refuse(text, text);
            return;
        }

        SupportsHeaders = connect.Headers && !Server.Options.NoHeaderSupport;
        connectReceived = true;
    }

    // RS+ <account> <subject> [<queue> <weight>]
    private void ProcessInterest(ReadOnlySpan<byte> args)
    {
        Span<Range> parts = stackalloc Range[5];
        var count = Protocol.ArgumentSplitter.Split(args, parts);
        if (count is not (2 or 4))
        {
            throw new RouteProtocolException($"processRemoteSub Parse Error: '{Encoding.UTF8.GetString(args)}'");
        }

        if (!registered || LinkOf(args[parts[0]]) is not { } link)
        {
            return;
        }

        if (Permissions is { } permissions && !permissions.CanSubscribe(args[parts[1]]))
        {
            // canExport: nats-server ignores it ("Can not export ..., ignoring remote subscription request").
            return;
        }

        var weight = 1;
        if (count == 4 && (!Utf8Parser.TryParse(args[parts[3]], out weight, out var consumed) || consumed != args[parts[3]].Length || weight < 0))
        {
            weight = 1;
        }

        var key = count == 2 ? args[parts[1]] : args[parts[1].Start..parts[2].End];
        link.AddInterest(args[parts[1]], count == 4 ? args[parts[2]] : default, key, weight);
    }

    // RS- <account> <subject> [<queue>]
    private void ProcessInterestRemoved(ReadOnlySpan<byte> args)
    {
        var accountEnd = args.IndexOf((byte)' ');
        if (accountEnd < 0)
        {
            throw new RouteProtocolException($"processRemoteUnsub Parse Error: '{Encoding.UTF8.GetString(args)}'");
        }

        if (registered && LinkOf(args[..accountEnd]) is { } link)
        {
            link.RemoveInterest(args[(accountEnd + 1)..].TrimStart((byte)' '));
        }
    }
}
