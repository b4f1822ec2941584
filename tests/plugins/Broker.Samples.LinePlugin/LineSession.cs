using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Samples.LinePlugin;

/// <summary>
/// One line-protocol connection: a read loop running commands through the connection's <see cref="IBusConnection"/>,
/// which authenticates it as a broker user, lists it in /connz, and writes deliveries into its output on publishers'
/// threads (<see cref="Deliver"/>), flushed once per batch. Everything the session sends goes through that client.
/// </summary>
internal sealed class LineSession : IAsyncDisposable
{
    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(5);

    private readonly TransportConnection connection;
    private readonly IMessageBus bus;
    private readonly LineSessionSettings settings;
    private readonly ILogger logger;
    private IBusConnection? client;
    private bool ended;

    public LineSession(TransportConnection connection, IMessageBus bus, LineSessionSettings settings, ILogger logger)
    {
        this.connection = connection;
        this.bus = bus;
        this.settings = settings;
        this.logger = logger;
    }

    public async Task RunAsync(CancellationToken cancellationToken)
    {
        try
        {
            await ReadLinesAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellationToken.IsCancellationRequested)
        {
            await WriteAsync("ERR idle timeout").ConfigureAwait(false);
        }
    }

    public async ValueTask DisposeAsync()
    {
        if (client is { } connected)
        {
            // Removes its subscriptions and leaves /connz ("Client Closed").
            await connected.DisposeAsync().ConfigureAwait(false);
        }
    }

    // Reads and runs commands until the client closes or the session ends; a read cancelled without the broker
    // stopping means the client was silent for the idle timeout.
    private async Task ReadLinesAsync(CancellationToken cancellationToken)
    {
        var input = connection.Transport.Input;
        var lines = new List<string>();
        while (!ended)
        {
            var result = await ReadAsync(input, cancellationToken).ConfigureAwait(false);

            var buffer = result.Buffer;
            var tooLong = false;
            while (buffer.PositionOf((byte)'\n') is { } end)
            {
                var line = buffer.Slice(0, end);
                if (line.Length > settings.MaxLine)
                {
                    tooLong = true;
                    break;
                }

                lines.Add(Encoding.UTF8.GetString(line).TrimEnd('\r'));
                buffer = buffer.Slice(buffer.GetPosition(1, end));
            }

            tooLong |= buffer.Length > settings.MaxLine;
            input.AdvanceTo(buffer.Start, buffer.End);
            foreach (var line in lines)
            {
                if (!ended)
                {
                    await ExecuteAsync(line, cancellationToken).ConfigureAwait(false);
                }
            }

            lines.Clear();
            if (tooLong)
            {
                await WriteAsync("ERR line too long").ConfigureAwait(false);
                return;
            }

            // Everything this read produced, the answers and what it published, goes out in one flush per receiver.
            if (client is { } connected)
            {
                await connected.FlushAsync(cancellationToken).ConfigureAwait(false);
            }

            if (result.IsCompleted || result.IsCanceled)
            {
                return;
            }
        }
    }

    // One read, given the whole idle timeout (the time commands take does not count).
    private async ValueTask<ReadResult> ReadAsync(PipeReader input, CancellationToken cancellationToken)
    {
        if (settings.IdleTimeout is not { } timeout)
        {
            return await input.ReadAsync(cancellationToken).ConfigureAwait(false);
        }

        using var idle = CancellationTokenSource.CreateLinkedTokenSource(cancellationToken);
        idle.CancelAfter(timeout);
        return await input.ReadAsync(idle.Token).ConfigureAwait(false);
    }

    private async Task ExecuteAsync(string line, CancellationToken cancellationToken)
    {
        var parts = line.Split(' ', 3);
        var command = parts[0].ToUpperInvariant();
        if (command == "CONNECT")
        {
            await ConnectAsync(parts, cancellationToken).ConfigureAwait(false);
            return;
        }

        if (command.Length == 0 || (client is null && !await ConnectAsync([], cancellationToken).ConfigureAwait(false)))
        {
            return;
        }

        var bound = client!;
        try
        {
            switch (command)
            {
                case "SUB" when parts.Length == 2:
                    bound.Subscribe(parts[1], null, Deliver);
                    Write("OK");
                    break;
                case "PUB" when parts.Length >= 2:
                    bound.Publish(parts[1], Encoding.UTF8.GetBytes(parts.Length == 3 ? parts[2] : ""));
                    Write("OK");
                    break;
                case "REQ" when parts.Length >= 2:
                    var reply = await bound.RequestAsync(parts[1], Encoding.UTF8.GetBytes(parts.Length == 3 ? parts[2] : ""), RequestTimeout, cancellationToken).ConfigureAwait(false);
                    Write($"MSG {reply.Subject} {Encoding.UTF8.GetString(reply.Payload.Span).Replace('\r', ' ').Replace('\n', ' ')}");
                    break;
                default:
                    Write("ERR unknown command");
                    break;
            }
        }
        catch (BusRefusedException ex)
        {
            // The user's permissions (or max_subscriptions) refused it; the text is the one a NATS client would get.
            Write("ERR " + ex.Message);
        }
        catch (ArgumentException)
        {
            Write("ERR invalid subject");
        }
        catch (NoRespondersException)
        {
            Write("ERR no responders");
        }
        catch (TimeoutException)
        {
            Write("ERR timeout");
        }
        catch (ObjectDisposedException)
        {
            // The broker closed the connection's client (a reload revoked the user, lame duck mode).
            ended = true;
        }
    }

    /// <summary>
    /// <c>CONNECT [&lt;user&gt; &lt;password&gt; | &lt;token&gt;]</c>, or the first other command without one: authenticates
    /// the connection as a broker user. A refused connection gets <c>ERR Authorization Violation</c> and is closed.
    /// </summary>
    private async Task<bool> ConnectAsync(string[] parts, CancellationToken cancellationToken)
    {
        if (client is not null)
        {
            Write("ERR already connected");
            return false;
        }

        var remote = connection.RemoteEndPoint?.ToString() ?? "?";
        var options = parts.Length switch
        {
            3 => new BusConnectOptions { Protocol = LinePlugin.Protocol, Name = "line " + remote, User = parts[1], Password = parts[2], DeferFlush = true },
            2 => new BusConnectOptions { Protocol = LinePlugin.Protocol, Name = "line " + remote, Token = parts[1], DeferFlush = true },
            _ => new BusConnectOptions { Protocol = LinePlugin.Protocol, Name = "line " + remote, DeferFlush = true },
        };
        var result = await bus.ConnectAsync(connection, options, cancellationToken).ConfigureAwait(false);
        if (result.Connection is not { } connected)
        {
            LineLog.NotAuthenticated(logger, remote, result.ErrorMessage ?? "refused");
            await WriteAsync("ERR " + result.ErrorMessage).ConfigureAwait(false);
            ended = true;
            return false;
        }

        client = connected;
        connected.Closed.Register(static state => ((LineSession)state!).OnClosedByBroker(), this);
        if (parts.Length > 0)
        {
            Write("OK");
        }

        return true;
    }

    // The broker closed the client (slow consumer, revoked user, shutdown): stop reading.
    private void OnClosedByBroker()
    {
        if (client?.CloseReason is { } reason && reason != "Client Closed")
        {
            LineLog.ClosedByBroker(logger, connection.RemoteEndPoint?.ToString() ?? "?", reason);
            ended = true;
            connection.Transport.Input.CancelPendingRead();
        }
    }

    /// <summary>
    /// A delivery, written straight into the output on the publisher's thread:
    /// <c>MSG &lt;subject&gt; &lt;text&gt;</c>, or <c>REQ &lt;subject&gt; &lt;reply&gt; &lt;text&gt;</c> when the publisher
    /// waits for an answer. Line breaks in the payload become spaces. Nothing is allocated.
    /// </summary>
    private static void Deliver(in BusMessage message, IBufferWriter<byte> output)
    {
        output.Write(message.ReplyTo.IsEmpty ? "MSG "u8 : "REQ "u8);
        output.Write(message.Subject);
        output.Write(" "u8);
        if (!message.ReplyTo.IsEmpty)
        {
            output.Write(message.ReplyTo);
            output.Write(" "u8);
        }

        foreach (var segment in message.Payload)
        {
            var text = output.GetSpan(segment.Length);
            segment.Span.CopyTo(text);
            text[..segment.Length].Replace((byte)'\r', (byte)' ');
            text[..segment.Length].Replace((byte)'\n', (byte)' ');
            output.Advance(segment.Length);
        }

        output.Write("\r\n"u8);
    }

    /// <summary>Writes one line of the session's own through the bus connection, flushed with the read's batch.</summary>
    private void Write(string line)
    {
        try
        {
            client?.WriteOutput(line, static (output, text) =>
            {
                Encoding.UTF8.GetBytes(text, output);
                output.Write("\r\n"u8);
            });
        }
        catch (ObjectDisposedException)
        {
            ended = true;
        }
    }

    /// <summary>Writes a last line and flushes it: through the bus connection when there is one, else straight to the transport.</summary>
    private async Task WriteAsync(string line)
    {
        if (client is { } connected)
        {
            Write(line);
            await connected.FlushAsync().ConfigureAwait(false);
            return;
        }

        var output = connection.Transport.Output;
        Encoding.UTF8.GetBytes(line + "\r\n", output);
        await output.FlushAsync().ConfigureAwait(false);
    }
}
