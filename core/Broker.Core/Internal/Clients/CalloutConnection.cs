using Broker.Core.Internal.Auth.Callout;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;
using Microsoft.Extensions.Logging;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// A connection's CONNECT through the authorization callout (<see cref="AuthCallout"/>, state in
/// <see cref="CalloutSession"/>): the request goes out while CONNECT is processed, the parse stops there, and the read
/// loop awaits the answer (no lock, no thread held, bounded by the authentication timeout) before it completes the
/// CONNECT (<see cref="Complete"/>) and parses what followed it. Made at the connection's first CONNECT the callout
/// intercepts.
/// </summary>
internal sealed class CalloutConnection(NatsClient client, ClientAuthentication authentication, ClientTransport transport, ILogger logger) : IDisposable
{
    private readonly CalloutSession session = new();

    // The account the request went to: where a refusal's account event is published.
    private string? calloutAccount;

    /// <summary>Starts the request; false, which stops the parse until the read loop took the answer (<see cref="TakePending"/>).</summary>
    public bool Start(AuthCallout authCallout, CalloutScope scope, ConnectMessage connect, string? rawUser, Auth.JwtUser? jwt)
    {
        // nats-server clears the authentication timer at CONNECT; the callout waits its own timeout.
        authentication.StopDeadline();
        calloutAccount = scope.Account;
        var identity = Events.ClientInfo.Of(client, rawUser, jwt);
        session.Start(authCallout, scope, identity, connect, authentication.Nonce, transport.Tls, authentication.Deadline(client.Server.Options.Authorization));
        return false;
    }

    /// <summary>The answer the read loop is to await before it parses more, once; null when none is pending.</summary>
    public Task<CalloutResult>? TakePending() => session.TakePending();

    /// <summary>Completes a CONNECT with the callout's answer; then flushes what it produced (+OK, -ERR).</summary>
    public void Complete(CalloutResult result)
    {
        if (client.IsClosed)
        {
            return;
        }

        if (result.User is not { } user)
        {
            client.AuthorizationViolation(result.Refusal, calloutAccount);
        }
        else
        {
            client.FinishConnect(user);
            if (!client.IsClosed)
            {
                session.Authorize(result.ExpiresIn, OnUserExpired);
            }
        }

        client.FlushPending();
    }

    /// <summary>
    /// A reload and a connection the callout authorized: its user and permissions came from the service, so it stays
    /// while its account exists (closed as "Client Closed", to reconnect, when the account is gone). True when handled.
    /// </summary>
    public bool ApplyReload()
    {
        if (!session.Authorized)
        {
            return false;
        }

        var account = client.Account;
        if (!client.Server.Accounts.TryGet(account.Name, out var current) || !ReferenceEquals(current, account))
        {
            ClientLog.AccountChangedOnReload(logger, client, account.Name);
            client.BeginClose(CloseReason.ClientClosed, default);
        }

        return true;
    }

    /// <summary>Stops the timer of the authorized user's expiry.</summary>
    public void Dispose() => session.Dispose();

    private void OnUserExpired()
    {
        if (client.IsClosed)
        {
            return;
        }

        AuthCalloutLog.UserExpired(logger, client);
        client.BeginClose(CloseReason.AuthenticationExpired, ServerMessages.ErrUserAuthenticationExpired);
    }
}
