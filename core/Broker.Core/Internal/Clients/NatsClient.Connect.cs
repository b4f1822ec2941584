using Broker.Core.Internal.Accounts;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// INFO out and CONNECT in: options applied over nats-server's defaults, then authentication (checked by
/// <see cref="ClientAuthentication"/>, applied here).
/// </summary>
internal sealed partial class NatsClient
{
    internal void SendInfo()
    {
        // NKey users sign this connection's nonce; nats-server sends one only when some user needs it.
        var info = Server.CreateClientInfo(this, nonce: authentication.CreateNonce(Server.Authenticator));
        SendProtocol(info, flushNow: true);
    }

    internal bool ProcessConnect(ReadOnlySpan<byte> json)
    {
        var connect = ConnectMessage.TryParse(json);
        if (connect is null)
        {
            // nats-server closes on a CONNECT it cannot unmarshal, without -ERR.
            ClientLog.BadConnect(logger, this);
            BeginClose(CloseReason.ParseError, default);
            return false;
        }

        keepAlive.RestartAfterConnect();
        keepAlive.EstimateRoundTrip(DateTimeOffset.UtcNow - StartedAt);
        options.Apply(connect, headersAllowed: !Server.Options.NoHeaderSupport);
        Echo = options.Echo;
        SupportsHeaders = options.Headers;
        NoResponders = options.NoResponders;
        Name = options.Name;
        trace.ClientName = Name;

        // Authentication comes first, as in nats-server; obsolete account fields are a violation.
        var user = authentication.Authenticate(Server.Authenticator, connect, transport.Credentials, this, logger);
        if (connect.Account is not null || connect.NewAccount == true)
        {
            AuthorizationViolation();
            return false;
        }

        // nats-server's rule: everyone but the auth users is decided by the callout (a configured one: whatever the
        // configuration says; an account JWT's: once the client's JWT put it in that account).
        if (Server.AuthCallout?.Route(connect, ref user, out var rawUser) is { } scope)
        {
            return (callout ??= new CalloutConnection(this, authentication, transport, logger)).Start(Server.AuthCallout, scope, connect, rawUser, user?.Jwt);
        }

        return user is null ? AuthorizationViolationAndStop() : FinishConnect(user);
    }

    /// <summary>
    /// The rest of CONNECT once the user is known: bind, refuse bad options, wait for an account change to be applied
    /// (<see cref="TakeSettling"/>), +OK, a lower payload limit.
    /// </summary>
    internal bool FinishConnect(AuthenticatedUser user)
    {
        if (!CompleteAuthentication(user))
        {
            return false;
        }

        var refusal = options.Refusal();
        if (refusal != CloseReason.None)
        {
            BeginClose(refusal, refusal == CloseReason.BadClientProtocol ? ServerMessages.ErrInvalidClientProtocol : ServerMessages.ErrNoRespondersRequiresHeaders);
            return false;
        }

        if (Account.Settling is { } changing)
        {
            // Operator mode registered or changed the account for this CONNECT: the plugins set it up (its JetStream)
            // before the CONNECT completes, as nats-server does. The parse stops; the read loop awaits it, then acknowledges.
            settling = changing;
            return false;
        }

        return AcknowledgeConnect();
    }

    /// <summary>The account change the read loop is to await before the CONNECT completes, once; null when none.</summary>
    internal Task? TakeSettling()
    {
        // Asked after every read: one field read when nothing waits.
        var pending = settling;
        if (pending is not null)
        {
            settling = null;
        }

        return pending;
    }

    /// <summary>The end of a CONNECT: +OK when verbose; false when the rest of the read is to be parsed again.</summary>
    internal bool AcknowledgeConnect()
    {
        if (options.Verbose)
        {
            SendProtocol(ServerMessages.Ok);
        }

        // The rest of this read was parsed with the server's max_payload: stop and parse it again with the account's.
        if (ClientLimits.LowersMaxPayload(Server.Options, Account, claims.MaxPayload))
        {
            RequestYield();
            return false;
        }

        return true;
    }

    /// <summary>Takes the user and binds the connection to its account; false when refused and closing.</summary>
    private bool CompleteAuthentication(AuthenticatedUser user)
    {
        authentication.Complete();
        TakeUser(user);
        claims.Take(user.Jwt);
        var refusal = AccountBinding.Bind(this, user, logger);
        if (refusal != CloseReason.None)
        {
            BeginClose(refusal, AccountBinding.Error(refusal));
            return false;
        }

        Server.Events?.ClientConnected(this);
        return true;
    }

    /// <summary>Binds the connection to the user's name and its own copy of the user's permissions (caches are per connection).</summary>
    private ClientPermissions? TakeUser(AuthenticatedUser user)
    {
        AuthorizedUser = user.Name;
        return Permissions = user.Permissions?.CreateForConnection();
    }

    private bool AuthorizationViolationAndStop()
    {
        AuthorizationViolation();
        return false;
    }

    /// <summary>
    /// Refuses the connection: -ERR 'Authorization Violation' and close, with nats-server 2.10's events: the account's
    /// <c>$SYS.ACCOUNT.CLIENT.AUTH.ERR</c> (in <paramref name="account"/>, the callout account that refused it, else in a
    /// configured callout's account, else in the client's own) with <paramref name="reason"/> (a callout's refusal, else
    /// <c>Authentication Failure</c>), then the server's <c>$SYS.SERVER.&lt;id&gt;.CLIENT.AUTH.ERR</c>.
    /// </summary>
    internal void AuthorizationViolation(string? reason = null, string? account = null)
    {
        ClientLog.AuthorizationViolation(logger, this);
        if (Server.Events is { } events)
        {
            account ??= Server.Options.Authorization.AuthCallout?.Account;
            var origin = account is not null && Server.Accounts.TryGet(account, out var found) ? found : account is null ? Account : null;
            events.AuthenticationFailed(this, authentication.ConnectUser, origin, reason ?? CloseReason.AuthenticationViolation.ToText());
        }

        BeginClose(CloseReason.AuthenticationViolation, ServerMessages.ErrAuthorization);
    }

    /// <summary>
    /// Before CONNECT with <c>no_auth_user</c> configured, the first operation binds the connection to that user
    /// (nats-server allows telnet-style use then). Returns false when that fails and the connection is closing.
    /// </summary>
    private bool EnsureAuthenticated()
    {
        if (authentication.IsAuthenticated)
        {
            return true;
        }

        var user = Server.Authenticator.Authenticate(null, null, null);
        if (user is null || Server.AuthCallout?.Intercepts(user.Name) == true)
        {
            // With a callout, only an auth user may be bound this way: the others need a CONNECT for the service.
            AuthorizationViolation();
            return false;
        }

        return CompleteAuthentication(Server.Options.Authorization.AuthCallout is { } configured ? Auth.Callout.AuthCallout.ForAuthUser(user, configured.Account) : user);
    }
}
