using System.Buffers;
using System.Globalization;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Subscriptions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// An account's internal client (nats-server's account <c>ic</c>, kind <c>ACCOUNT</c>): it owns the subscriptions of
/// the account's service imports on their <c>from</c> subjects and, in an exporting account, the one on
/// <c>_R_.xxxxxx.&gt;</c> that catches responses. A delivery to it is not sent anywhere: the producer forwards the
/// message across the import on its own thread (<see cref="ClientBase.ForwardToImportClient"/>): its subscriptions are
/// their own <see cref="Subscription.Origin"/>, which sends them down the publish path's import branch. It is not a connection
/// (absent from /connz, no connection id) but its subscriptions count in the account's, as nats-server's do.
/// </summary>
internal sealed class AccountImportClient : ClientBase
{
    private readonly Lock sync = new();
    private readonly List<Subscription> imports = [];
    private long nextSid;

    public AccountImportClient(BrokerCore server, Account account)
        : base(server, ClientKind.Account, account, assignId: false)
    {
    }

    public override bool IsClosed => false;

    /// <summary>Replaces the import subscriptions with one per import of <paramref name="services"/>.</summary>
    public void SetImports(ServiceImport[] services)
    {
        lock (sync)
        {
            foreach (var old in imports)
            {
                old.Closed = true;
                Account.SubList.Remove(old);
            }

            imports.Clear();
            foreach (var import in services)
            {
                var subscription = NewSubscription(import.FromBytes);
                subscription.ServiceImport = import;
                subscription.Origin = subscription;
                if (Account.SubList.Insert(subscription))
                {
                    imports.Add(subscription);
                }
            }
        }
    }

    /// <summary>Subscribes the account's response prefix (<c>_R_.xxxxxx.&gt;</c>).</summary>
    public void SubscribeResponses(string subject)
    {
        lock (sync)
        {
            var subscription = NewSubscription(System.Text.Encoding.UTF8.GetBytes(subject));
            subscription.Origin = subscription;
            Account.SubList.Insert(subscription);
        }
    }

    /// <summary>
    /// Not used: a producer that matches one of this client's subscriptions forwards the message itself
    /// (<see cref="ClientBase.ForwardToImportClient"/>), since it needs the subject it routed by as well as the one it
    /// delivers as.
    /// </summary>
    public override void Deliver(ClientBase producer, Subscription subscription, ReadOnlySpan<byte> subject, ReadOnlySpan<byte> replyTo, in ReadOnlySequence<byte> headers, in ReadOnlySequence<byte> payload)
    {
    }

    // Under sync.
    private Subscription NewSubscription(byte[] subject) =>
        new(this, subject, null, System.Text.Encoding.ASCII.GetBytes((++nextSid).ToString(CultureInfo.InvariantCulture)));
}
