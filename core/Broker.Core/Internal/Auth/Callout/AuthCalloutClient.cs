using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Clients;

namespace Broker.Core.Internal.Auth.Callout;

/// <summary>
/// The server's client in the callout account (nats-server's internal account client): it publishes the requests to
/// <c>$SYS.REQ.USER.AUTH</c> and receives the answers on <c>$SYS._INBOX.&lt;random&gt;.&lt;n&gt;</c>, the reply subjects'
/// shape nats-server's <c>newRespInbox</c> gives them. Without a service listening a request gets no 503 status, as an
/// internal request of nats-server gets none: it waits for the timeout.
/// </summary>
internal sealed class AuthCalloutClient : InProcessClient
{
    public AuthCalloutClient(BrokerCore server, Account account)
        : base(server, "auth callout", echo: false, ClientKind.Internal, deferFlush: false, account)
    {
        NoResponders = false;
    }

    protected override string NewInboxPrefix() => "$SYS._INBOX." + ServerIdentity.RandomBase32(8) + ".";
}
