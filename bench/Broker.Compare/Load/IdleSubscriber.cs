using System.Net.Sockets;
using System.Text;

namespace Broker.Compare.Load;

/// <summary>
/// One idle account of <c>--accounts N</c>: a connection logged in as the account's user, holding
/// <see cref="SubscriptionsPerAccount"/> subscriptions on the subjects the row publishes on (exact subjects, the
/// request and inbox subjects, the import rows' prefixed subjects, and wildcards up to <c>&gt;</c>), spread round robin.
/// A reader thread answers the server's PINGs and counts every message that arrives: with isolation there is none,
/// and <see cref="Finish"/> reports any that did.
/// </summary>
internal sealed class IdleSubscriber : IDisposable
{
    /// <summary>Subscriptions each idle account holds.</summary>
    public const int SubscriptionsPerAccount = 1_000;

    private readonly NatsSocket socket;
    private readonly Thread reader;
    private readonly Lock sending = new();
    private long messages;
    private long pongs;
    private volatile bool closing;
    private string? failure;

    private IdleSubscriber(NatsSocket socket, string name)
    {
        this.socket = socket;
        reader = new Thread(Read) { IsBackground = true, Name = name };
        reader.Start();
    }

    /// <summary>The user this connection logged in as.</summary>
    public required string User { get; init; }

    /// <summary>
    /// Connects as <paramref name="user"/> and subscribes <see cref="SubscriptionsPerAccount"/> times over the subjects
    /// under <paramref name="subjectBases"/> (the row's <c>bench.&lt;row&gt;.&lt;run&gt;</c> subjects).
    /// </summary>
    public static IdleSubscriber Open(NatsEndpoint server, string user, IReadOnlyList<string> subjectBases)
    {
        ArgumentNullException.ThrowIfNull(subjectBases);
        var patterns = new List<string> { ">", "bench.>", "imp.>", "svc.>" };
        foreach (var subject in subjectBases)
        {
            patterns.AddRange([subject, subject + ".>", subject + ".svc", subject + ".inbox.0.*", "imp." + subject, "svc." + subject + ".svc"]);
        }

        var subscriptions = new StringBuilder();
        for (var sid = 1; sid <= SubscriptionsPerAccount; sid++)
        {
            subscriptions.Append("SUB ").Append(patterns[(sid - 1) % patterns.Count]).Append(' ').Append(sid).Append("\r\n");
        }

        var socket = NatsSocket.Open(server, "idle-" + user, subscriptions.ToString(), user: user);

        // The reader blocks until the server says something (a PING every few minutes) or the row ends; a read timeout
        // would leave a TLS or WebSocket stream unusable.
        socket.Socket.ReceiveTimeout = 0;
        return new IdleSubscriber(socket, "idle-" + user) { User = user };
    }

    /// <summary>
    /// Confirms with PING/PONG that the server processed everything before now, then returns the messages this
    /// account received (0 when isolation holds); throws when the connection failed.
    /// </summary>
    public long Finish()
    {
        var before = Interlocked.Read(ref pongs);
        lock (sending)
        {
            socket.Send("PING\r\n"u8);
        }

        var deadline = DateTime.UtcNow + NatsSocket.IoTimeout;
        while (Interlocked.Read(ref pongs) == before && Volatile.Read(ref failure) is null)
        {
            if (DateTime.UtcNow > deadline)
            {
                throw new TimeoutException($"Idle account user {User} got no PONG within {NatsSocket.IoTimeout.TotalSeconds:0} s.");
            }

            Thread.Sleep(5);
        }

        return Volatile.Read(ref failure) is { } error
            ? throw new InvalidOperationException($"Idle account user {User}: {error}")
            : Interlocked.Read(ref messages);
    }

    public void Dispose()
    {
        closing = true;
        socket.Abort();
        reader.Join(TimeSpan.FromSeconds(5));
    }

    private void Read()
    {
        var buffer = new byte[16 * 1024];
        var scanner = new MessageScanner();
        var handler = new Handler(this);
        try
        {
            while (!closing)
            {
                var received = socket.Receive(buffer);
                if (received == 0)
                {
                    throw new IOException("the server closed the connection");
                }

                scanner.Feed(buffer.AsSpan(0, received), ref handler);
            }
        }
        catch (Exception ex) when (!closing && ex is IOException or SocketException or InvalidOperationException or ObjectDisposedException)
        {
            Volatile.Write(ref failure, ex.Message);
        }
        catch (Exception) when (closing)
        {
            // Disposed at the end of the row.
        }
    }

    private readonly struct Handler(IdleSubscriber owner) : IScanHandler
    {
        public bool WantsPayload => false;

        public void OnMessage(ReadOnlySpan<byte> replyTo, int size, ReadOnlySpan<byte> payload) => Interlocked.Increment(ref owner.messages);

        public void OnPing()
        {
            lock (owner.sending)
            {
                owner.socket.SendPong();
            }
        }

        public void OnPong() => Interlocked.Increment(ref owner.pongs);
    }
}
