using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Auth.Callout;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// CONNECT through the authorization callout (<see cref="AuthCallout"/>, state in <see cref="CalloutSession"/>): the
/// request goes out while CONNECT is processed, the parse stops there, and the read loop awaits the answer (no lock,
/// no thread held, bounded by the authentication timeout) before it completes the CONNECT and parses what followed it.
/// </summary>
internal sealed partial class NatsClient
{
    private CalloutSession? callout;

    private bool StartCallout(AuthCallout authCallout, ConnectMessage connect, string? rawUser)
    {
        // nats-server clears the authentication timer at CONNECT; the callout waits its own timeout.
        authentication.StopDeadline();
        callout ??= new CalloutSession();
        var type = transport.Listener?.Name == "websocket" ? "websocket" : "nats";
        callout.Start(authCallout, Id, RemoteEndPoint, type, connect, authentication.Nonce, rawUser, transport.Tls, authentication.Deadline(Server.Options.Authorization));

        // Stops the parse: the read loop takes the answer (TakePending) before anything after CONNECT is read.
        return false;
    }

    /// <summary>Completes a CONNECT with the callout's answer; then flushes what it produced (+OK, -ERR).</summary>
    private void CompleteCallout(CalloutResult? result)
    {
        if (IsClosed)
        {
            return;
        }

        if (result is null)
        {
            AuthorizationViolation();
        }
        else
        {
            FinishConnect(result.User);
            if (!IsClosed)
            {
                callout!.Authorize(result.ExpiresIn, OnCalloutUserExpired);
            }
        }

        FlushPending();
    }

    private void OnCalloutUserExpired()
    {
        if (IsClosed)
        {
            return;
        }

        AuthCalloutLog.UserExpired(logger, this);
        BeginClose(CloseReason.AuthenticationExpired, ServerMessages.ErrUserAuthenticationExpired);
    }

    /// <summary>
    /// A reload and a connection the callout authorized: its user and permissions came from the service, so it stays
    /// while its account exists (closed as "Client Closed", to reconnect, when the account is gone). True when handled.
    /// </summary>
    private bool ApplyReloadToCalloutUser()
    {
        if (callout is not { Authorized: true })
        {
            return false;
        }

        if (!Server.Accounts.TryGet(Account.Name, out var current) || !ReferenceEquals(current, Account))
        {
            ClientLog.AccountChangedOnReload(logger, this, Account.Name);
            BeginClose(CloseReason.ClientClosed, default);
        }

        return true;
    }
}
