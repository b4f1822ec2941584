using System.Buffers;
using System.IO.Pipelines;
using System.Text;
using Broker.Abstractions;
using Microsoft.Extensions.Logging;

namespace Broker.Samples.LinePlugin;

/// <summary>One line-protocol connection: a read loop running commands, and deliveries written from publishers' threads.</summary>
internal sealed class LineSession : IAsyncDisposable
{
    private static readonly TimeSpan RequestTimeout = TimeSpan.FromSeconds(5);

    private readonly TransportConnection connection;
    private readonly IBusClient client;
    private readonly LineSessionSettings settings;
    private readonly ILogger logger;
    private readonly List<IBusSubscription> subscriptions = [];

    // Deliveries run on publishers' threads; the lock keeps lines whole and ordered.
    private readonly Lock writeLock = new();
    private bool closed;

    public LineSession(TransportConnection connection, IBusClient client, LineSessionSettings settings, ILogger logger)
    {
        this.connection = connection;
        this.client = client;
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
            Write("ERR idle timeout");
        }
    }

    // Reads and runs commands until the client closes; a read cancelled without the broker stopping means the client
    // was silent for the idle timeout.
    private async Task ReadLinesAsync(CancellationToken cancellationToken)
    {
        var input = connection.Transport.Input;
        var lines = new List<string>();
        while (true)
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
                await ExecuteAsync(line, cancellationToken).ConfigureAwait(false);
            }

            lines.Clear();
            if (tooLong)
            {
                Write("ERR line too long");
                return;
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

    public async ValueTask DisposeAsync()
    {
        lock (writeLock)
        {
            closed = true;
        }

        foreach (var subscription in subscriptions)
        {
            subscription.Dispose();
        }

        await client.DisposeAsync().ConfigureAwait(false);
    }

    private async Task ExecuteAsync(string line, CancellationToken cancellationToken)
    {
        var parts = line.Split(' ', 3);
        try
        {
            switch (parts[0].ToUpperInvariant())
            {
                case "SUB" when parts.Length == 2:
                    subscriptions.Add(client.Subscribe(parts[1], null, Deliver));
                    Write("OK");
                    break;
                case "PUB" when parts.Length >= 2:
                    client.Publish(parts[1], Encoding.UTF8.GetBytes(parts.Length == 3 ? parts[2] : ""));
                    Write("OK");
                    break;
                case "REQ" when parts.Length >= 2:
                    var reply = await client.RequestAsync(parts[1], Encoding.UTF8.GetBytes(parts.Length == 3 ? parts[2] : ""), RequestTimeout, cancellationToken).ConfigureAwait(false);
                    Write($"MSG {reply.Subject} {Text(new ReadOnlySequence<byte>(reply.Payload))}");
                    break;
                case "":
                    break;
                default:
                    Write("ERR unknown command");
                    break;
            }
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
    }

    private void Deliver(in BusMessage message)
    {
        var subject = Encoding.UTF8.GetString(message.Subject);
        var text = Text(message.Payload);
        Write(message.ReplyTo.IsEmpty
            ? $"MSG {subject} {text}"
            : $"REQ {subject} {Encoding.UTF8.GetString(message.ReplyTo)} {text}");
    }

    // Writes one line without waiting: a flush that would wait means the peer does not read, so it is dropped.
    private void Write(string line)
    {
        lock (writeLock)
        {
            if (closed)
            {
                return;
            }

            var output = connection.Transport.Output;
            try
            {
                Encoding.UTF8.GetBytes(line + "\r\n", output);
                var flush = output.FlushAsync(CancellationToken.None);
                if (!flush.IsCompleted)
                {
                    closed = true;
                    LineLog.SlowConsumer(logger, connection.RemoteEndPoint?.ToString() ?? "?");
                    connection.Abort("slow consumer");
                    _ = flush.AsTask();
                }
            }
            catch (InvalidOperationException)
            {
                // The output was completed: the connection is closing.
                closed = true;
            }
        }
    }

    // A payload as one line of text: line breaks would split it, so they become spaces.
    private static string Text(ReadOnlySequence<byte> payload) =>
        Encoding.UTF8.GetString(payload).Replace('\r', ' ').Replace('\n', ' ');
}
