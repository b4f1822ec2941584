using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Logging;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>INFO out and CONNECT in: options applied over nats-server's defaults, then authentication.</summary>
internal sealed partial class NatsClient
{
    private void SendInfo()
    {
        var info = Server.CreateClientInfo(this);
        SendProtocol(info, flushNow: true);
    }

    private bool ProcessConnect(ReadOnlySpan<byte> json)
    {
        var connect = ConnectMessage.TryParse(json);
        if (connect is null)
        {
            // nats-server closes on a CONNECT it cannot unmarshal, without -ERR.
            ClientLog.BadConnect(logger, this);
            BeginClose(CloseReason.ParseError, default);
            return false;
        }

        RestartPingTimerAfterConnect();
        verbose = connect.Verbose ?? verbose;
        pedantic = connect.Pedantic ?? pedantic;
        Echo = connect.Echo ?? Echo;
        SupportsHeaders = !Server.Options.NoHeaderSupport && (connect.Headers ?? SupportsHeaders);
        NoResponders = connect.NoResponders ?? NoResponders;
        protocol = connect.Protocol ?? protocol;
        Name = connect.Name ?? Name;
        Lang = connect.Lang ?? Lang;
        ClientVersion = connect.Version ?? ClientVersion;

        // Authentication comes first, as in nats-server; obsolete account fields are a violation.
        RememberCredentials(connect.User, connect.Password, connect.AuthToken);
        var user = Server.Authenticator.Authenticate(connect.User, connect.Password, connect.AuthToken);
        if (user is null || connect.Account is not null || connect.NewAccount == true)
        {
            AuthorizationViolation();
            return false;
        }

        CompleteAuthentication(user);
        if (protocol is < 0 or > 1)
        {
            BeginClose(CloseReason.BadClientProtocol, ServerMessages.ErrInvalidClientProtocol);
            return false;
        }

        if (NoResponders && !SupportsHeaders)
        {
            BeginClose(CloseReason.NoRespondersRequiresHeaders, ServerMessages.ErrNoRespondersRequiresHeaders);
            return false;
        }

        if (verbose)
        {
            SendProtocol(ServerMessages.Ok);
        }

        return true;
    }

    private void CompleteAuthentication(AuthenticatedUser user)
    {
        authenticated = true;
        StopAuthTimer();
        AuthorizedUser = user.Name;
        Permissions = user.Permissions?.CreateForConnection();
    }

    private void AuthorizationViolation()
    {
        ClientLog.AuthorizationViolation(logger, this);
        BeginClose(CloseReason.AuthenticationViolation, ServerMessages.ErrAuthorization);
    }
}
