using System.Buffers;
using System.Text.Json;
using System.Threading.Channels;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Monitoring;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The events the system account publishes (nats-server events.go): client connects and disconnects per account,
/// the account connection counts, authentication failures, the server's STATSZ on its cadence, and SHUTDOWN. A client's
/// connect or close path only captures the event and enqueues it (one allocation, no lock, no publish under the
/// client's locks); one loop writes and publishes them in order through the system account's client. The queue is
/// bounded: when a connect flood fills it, further events are dropped and counted (<see cref="Dropped"/>).
/// </summary>
internal sealed class SystemEvents
{
    /// <summary>nats-server 2.10's authentication error event of an account, published in that account.</summary>
    public const string AccountAuthErrorSubject = "$SYS.ACCOUNT.CLIENT.AUTH.ERR";

    /// <summary>How many events may wait to be published before new ones are dropped.</summary>
    public const int QueueCapacity = 8192;

    // nats-server's eventsHBInterval (the STATSZ ceiling) and its first interval, which doubles up to it.
    private static readonly TimeSpan StatszInterval = TimeSpan.FromSeconds(30);
    private static readonly TimeSpan FirstStatszInterval = TimeSpan.FromMilliseconds(250);

    private readonly BrokerCore core;
    private readonly SystemPublisher publisher;
    private readonly MonitorEndpoints endpoints;
    private readonly Channel<SystemEvent> queue = Channel.CreateBounded<SystemEvent>(new BoundedChannelOptions(QueueCapacity)
    {
        SingleReader = true,
        FullMode = BoundedChannelFullMode.Wait,
    });

    private long dropped;

    public SystemEvents(BrokerCore core, SystemPublisher publisher, MonitorEndpoints endpoints)
    {
        this.core = core;
        this.publisher = publisher;
        this.endpoints = endpoints;
        StatszSubject = "$SYS.SERVER." + core.ServerId + ".STATSZ";
    }

    /// <summary>Events dropped because the queue was full.</summary>
    public long Dropped => Interlocked.Read(ref dropped);

    public string StatszSubject { get; }

    /// <summary>A client authenticated into its account: CONNECT and the account's connection count, unless in <c>$G</c>.</summary>
    public void ClientConnected(ClientBase client)
    {
        var account = client.Account;
        if (account.IsGlobal || client is not IClientConnection)
        {
            return;
        }

        Enqueue(new ConnectEvent(account.Name, ClientInfo.Of(client, client.AuthorizedUser)));
        EnqueueConns(account);
    }

    /// <summary>A client of an account other than <c>$G</c> closed: DISCONNECT with its counters and reason, and the count.</summary>
    public void ClientDisconnected(ClientBase client)
    {
        var account = client.Account;
        if (account.IsGlobal || client is not IClientConnection connection)
        {
            return;
        }

        var stop = connection.ClosedAt?.UtcDateTime ?? DateTime.UtcNow;
        Enqueue(new DisconnectEvent(
            "$SYS.ACCOUNT." + account.Name + ".DISCONNECT",
            Stopped(client, client.AuthorizedUser, stop),
            new DataCounts(Interlocked.Read(ref client.InMessages), Interlocked.Read(ref client.InBytes)),
            new DataCounts(Interlocked.Read(ref client.OutMessages), Interlocked.Read(ref client.OutBytes)),
            connection.ClosedReasonText,
            stop));
        EnqueueConns(account);
    }

    /// <summary>
    /// A client failed to authenticate: nats-server 2.10's <c>$SYS.ACCOUNT.CLIENT.AUTH.ERR</c> published in
    /// <paramref name="account"/> (when given) with <paramref name="reason"/>, then <c>$SYS.SERVER.&lt;id&gt;.CLIENT.AUTH.ERR</c>
    /// in the system account, whatever its account, with reason <c>Authentication Failure</c>.
    /// </summary>
    public void AuthenticationFailed(ClientBase client, string? user, Accounts.Account? account, string reason)
    {
        if (client is not IClientConnection)
        {
            return;
        }

        var now = DateTime.UtcNow;
        var sent = new DataCounts(Interlocked.Read(ref client.InMessages), Interlocked.Read(ref client.InBytes));
        var received = new DataCounts(Interlocked.Read(ref client.OutMessages), Interlocked.Read(ref client.OutBytes));
        if (account is not null)
        {
            var info = Stopped(client, user, now);
            info.Account = account.Name;
            Enqueue(new DisconnectEvent(AccountAuthErrorSubject, info, sent, received, reason, now, account));
        }

        Enqueue(new DisconnectEvent(
            "$SYS.SERVER." + core.ServerId + ".CLIENT.AUTH.ERR",
            Stopped(client, user, now),
            sent,
            received,
            CloseReason.AuthenticationViolation.ToText(),
            now));
    }

    // A disconnect's client: with its round trip (when measured) and when it stopped.
    private static ClientInfo Stopped(ClientBase client, string? user, DateTime stop)
    {
        var info = ClientInfo.Of(client, user);
        info.Rtt = ((IClientConnection)client).RoundTrip.Ticks * 100;
        info.StoppedAt(new DateTimeOffset(stop, TimeSpan.Zero));
        return info;
    }

    /// <summary>The account's connection event for a requester (<c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.CONNS</c>).</summary>
    public AccountConnsEvent Conns(Accounts.Account account, string reply) => new(account, endpoints, reply);

    /// <summary>Publishes events until <paramref name="stopping"/>, then what is left in the queue.</summary>
    public async Task RunAsync(CancellationToken stopping)
    {
        var buffer = new ArrayBufferWriter<byte>(1024);
        try
        {
            while (await queue.Reader.WaitToReadAsync(stopping).ConfigureAwait(false))
            {
                while (queue.Reader.TryRead(out var item))
                {
                    publisher.Publish(item, buffer);
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }

        while (queue.Reader.TryRead(out var item))
        {
            publisher.Publish(item, buffer);
        }
    }

    /// <summary>
    /// STATSZ on nats-server's cadence: the first after 250 ms, the interval doubling up to 30 s
    /// (<c>startStatszTimer</c>, <c>heartbeatStatsz</c>).
    /// </summary>
    public async Task RunStatszAsync(TimeProvider time, CancellationToken stopping)
    {
        var interval = FirstStatszInterval;
        try
        {
            while (true)
            {
                await Task.Delay(interval, time, stopping).ConfigureAwait(false);
                Enqueue(new StatszEvent(StatszSubject, endpoints, core));
                if (interval < StatszInterval)
                {
                    interval = TimeSpan.FromTicks(Math.Min(interval.Ticks * 2, StatszInterval.Ticks));
                }
            }
        }
        catch (OperationCanceledException) when (stopping.IsCancellationRequested)
        {
        }
    }

    // On the new subject and the older one, as nats-server sends both.
    private void EnqueueConns(Accounts.Account account) => Enqueue(new AccountConnsEvent(account, endpoints));

    /// <summary>Queues an event for the loop, or counts it dropped when the queue is full; never waits.</summary>
    internal void Enqueue(SystemEvent item)
    {
        if (!queue.Writer.TryWrite(item))
        {
            Interlocked.Increment(ref dropped);
        }
    }
}
