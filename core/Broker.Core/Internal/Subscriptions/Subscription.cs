using System.Text;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Subscriptions;

/// <summary>
/// One subscription of one client. Immutable identity (subject, queue, sid); mutable delivery counters.
/// </summary>
/// <remarks>
/// It is also the <see cref="Broker.Abstractions.IBusSubscription"/> an <see cref="InProcessClient"/> hands out, rather
/// than a 32 B wrapper per subscription: an adapter's idle session holds one for as long as its client is connected
/// (issue 25). Its members are explicit, so the core's own code does not see them.
/// </remarks>
internal sealed class Subscription : Broker.Abstractions.IBusSubscription
{
    public Subscription(ClientBase client, byte[] subject, byte[]? queue, byte[] sid)
    {
        Client = client;
        Subject = subject;
        Queue = queue;
        Sid = sid;
    }

    /// <summary>The owning client; deliveries go to it.</summary>
    public ClientBase Client { get; }

    /// <summary>The subject pattern (UTF-8, may hold wildcards).</summary>
    public byte[] Subject { get; }

    /// <summary>The queue group name, or <see langword="null"/> for a plain subscription.</summary>
    public byte[]? Queue { get; }

    /// <summary>The client's subscription id, written verbatim into MSG lines.</summary>
    public byte[] Sid { get; }

    /// <summary>Messages delivered so far (incremented with <see cref="Interlocked"/>).</summary>
    public long Delivered;

    /// <summary>Auto-unsubscribe limit (UNSUB sid max); 0 means none.</summary>
    public long Max;

    /// <summary>
    /// For a link's queue interest, the weight its RS+ or LS+ gave (the other side's members): a queue pick counts the
    /// subscription that many times, as nats-server's sublist shadows a remote queue subscription <c>qw</c> times. A
    /// later RS+/LS+ of the key changes it in place (results in the match cache see it). 1 for any other subscription.
    /// </summary>
    public int QueueWeight = 1;

    /// <summary>Set once the subscription has been removed, so late deliveries from cached results are dropped.</summary>
    public volatile bool Closed;

    /// <summary>Set when this wildcard subscription overlaps a subscribe-deny entry and deliveries must be checked.</summary>
    public bool CheckDenyOnDelivery;

    /// <summary>
    /// Set when the subscriber itself unsubscribed or closed (not when an auto-unsubscribe limit was reached): messages
    /// still queued for an in-process handler are then dropped.
    /// </summary>
    public volatile bool Cancelled;

    /// <summary>
    /// For in-process subscriptions: the handler queued deliveries are passed to, a
    /// <see cref="Broker.Abstractions.BusMessageHandler"/> or an <see cref="Broker.Abstractions.IBusMessageReceiver"/> (no
    /// delegate per subscription of an object that receives, 64 B per idle MQTT session; issue 25).
    /// </summary>
    public object? Handler;

    /// <summary>For adapter connections' output subscriptions: encodes each delivery into the connection's output.</summary>
    public Broker.Abstractions.BusOutputHandler? Output;

    // Import, ServiceImport, Origin and Shadows: set on shadow subscriptions, import clients' subscriptions and those
    // with shadows only, so held in an object made with the first (24 B less on every other subscription, issue 25).
    // Import, ServiceImport and Origin are set before the subscription is inserted; Shadows under the owning client's
    // subscriptions lock.
    private Links? links;

    /// <summary>
    /// For a shadow subscription in an exporting account: the stream import it delivers through (the delivered subject
    /// is the import's). <see langword="null"/> for every other subscription.
    /// </summary>
    public Broker.Core.Internal.Accounts.StreamImport? Import
    {
        get => links?.Import;
        set
        {
            if (value is not null || links is not null)
            {
                (links ??= new Links()).Import = value;
            }
        }
    }

    /// <summary>
    /// For a subscription of an account's import client: the service import it forwards through. <see langword="null"/>
    /// for every other subscription (and for the import client's subscription catching responses).
    /// </summary>
    public Broker.Core.Internal.Accounts.ServiceImport? ServiceImport
    {
        get => links?.ServiceImport;
        set
        {
            if (value is not null || links is not null)
            {
                (links ??= new Links()).ServiceImport = value;
            }
        }
    }

    /// <summary>
    /// For a shadow subscription: the importer's subscription it stands for (deliveries are made to it). For a
    /// subscription of an account's import client: itself (the producer forwards across the service import).
    /// </summary>
    public Subscription? Origin
    {
        get => links?.Origin;
        set
        {
            if (value is not null || links is not null)
            {
                (links ??= new Links()).Origin = value;
            }
        }
    }

    /// <summary>
    /// The shadow subscriptions this subscription has in exporting accounts, or <see langword="null"/>; changed under
    /// the owning client's subscriptions lock.
    /// </summary>
    public Subscription[]? Shadows
    {
        get => links?.Shadows;
        set
        {
            if (value is not null || links is not null)
            {
                (links ??= new Links()).Shadows = value;
            }
        }
    }

    public string SubjectString => Encoding.UTF8.GetString(Subject);

    public string? QueueString => Queue is null ? null : Encoding.UTF8.GetString(Queue);

    public string SidString => Encoding.UTF8.GetString(Sid);

    string Broker.Abstractions.IBusSubscription.Subject => SubjectString;

    string? Broker.Abstractions.IBusSubscription.QueueGroup => QueueString;

    long Broker.Abstractions.IBusSubscription.Delivered => Interlocked.Read(ref Delivered);

    void Broker.Abstractions.IBusSubscription.AutoUnsubscribe(long maxMessages)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxMessages);
        Max = maxMessages;
        if (Interlocked.Read(ref Delivered) >= maxMessages)
        {
            Client.RemoveSubscription(this);
        }
    }

    /// <summary>Unsubscribes on behalf of the subscriber (handed out by <see cref="InProcessClient"/> only).</summary>
    void IDisposable.Dispose() => ((InProcessClient)Client).Cancel(this);

    public override string ToString() => Queue is null ? $"{SubjectString} [{SidString}]" : $"{SubjectString} {QueueString} [{SidString}]";

    /// <summary>The rare links of a subscription (see <see cref="links"/>).</summary>
    private sealed class Links
    {
        public Broker.Core.Internal.Accounts.StreamImport? Import;
        public Broker.Core.Internal.Accounts.ServiceImport? ServiceImport;
        public Subscription? Origin;
        public Subscription[]? Shadows;
    }
}
