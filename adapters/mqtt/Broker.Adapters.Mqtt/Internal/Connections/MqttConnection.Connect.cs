using System.Security.Cryptography;
using System.Text;
using Broker.Abstractions;
using Broker.Adapters.Mqtt.Internal.Accounts;
using Broker.Adapters.Mqtt.Internal.Codec;
using Broker.Adapters.Mqtt.Internal.Sessions;

namespace Broker.Adapters.Mqtt.Internal.Connections;

/// <summary>CONNECT: checks, authentication, the session, CONNACK and the restored subscriptions.</summary>
internal sealed partial class MqttConnection
{
    private MqttSession? session;

    // The client's bus connections, once its credentials were accepted, and the MQTT state of the account they are in.
    private BusConnections? buses;
    private MqttAccount? accountState;
    private bool v5;
    private WillMessage? will;
    private int keepAliveSeconds;

    // MQTT 5 limits the client set for what the broker sends it.
    private uint clientMaximumPacketSize;
    private ushort clientTopicAliasMaximum;
    private ushort clientReceiveMaximum = ushort.MaxValue;
    private bool requestProblemInformation = true;

    private async ValueTask HandleConnectAsync(ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        var connect = new ConnectPacket();
        try
        {
            connect.Parse(body.Span);
            v5 = connect.IsV5;
            if (v5 && packets.ConnectLengthNotMinimal)
            {
                throw MqttProtocolException.Malformed("remaining length not in the fewest bytes");
            }

            ValidateConnect(connect);
        }
        catch (MqttProtocolException ex)
        {
            RefuseConnect(connect, ex.Reason, ex.Message);
            return;
        }

        var clientId = connect.ClientId;
        var assigned = false;
        if (clientId.Length == 0)
        {
            // MQTT-3.1.3-6: the server assigns an id; 3.1.1 allows it only for a clean session (MQTT-3.1.3-7).
            clientId = NewClientId();
            assigned = true;
        }

        status.NamedClientId = clientId;
        will = connect.Will;
        keepAliveSeconds = connect.KeepAlive;
        ushort? serverKeepAlive = null;
        if (v5 && Options.ServerKeepAlive is { } imposed)
        {
            serverKeepAlive = (ushort)imposed.TotalSeconds;
            keepAliveSeconds = serverKeepAlive.Value;
        }
        else if (v5 && Options.MaxKeepAlive is { } maximum && (keepAliveSeconds == 0 || keepAliveSeconds > maximum.TotalSeconds))
        {
            // MQTT-3.2.2-21: the client uses the Server Keep Alive it is told; the server holds it to it at 1.5 times.
            serverKeepAlive = (ushort)maximum.TotalSeconds;
            keepAliveSeconds = serverKeepAlive.Value;
        }

        clientMaximumPacketSize = connect.MaximumPacketSize;
        clientTopicAliasMaximum = connect.TopicAliasMaximum;
        clientReceiveMaximum = connect.ReceiveMaximum;
        requestProblemInformation = connect.RequestProblemInformation;
        output.SetClientLimits(clientMaximumPacketSize, requestProblemInformation);

        // MQTT 3.1.1: a session without the clean flag lives for ever (nats-server keeps it until the client cleans it).
        var expiry = v5 ? connect.SessionExpiryInterval : connect.CleanStart ? 0u : uint.MaxValue;
        var credentials = BusCredentials(connect, clientId);
        BusConnectResult result;
        try
        {
            result = await handler.Bus.ConnectAsync(transport, credentials, cancellationToken).ConfigureAwait(false);
        }
        catch (ArgumentException)
        {
            // The account of the mqtt block's authorization is not among the broker's (misspelt, or removed by a reload).
            RefuseConnect(connect, ReasonCode.ServerUnavailable, $"the broker has no account \"{credentials.Account}\" (mqtt authorization's account)");
            return;
        }

        if (result.Connection is not { } connected)
        {
            RefuseConnect(
                connect,
                result.Error == BusConnectError.MaxConnectionsExceeded ? ReasonCode.ServerUnavailable
                : connect.UserName is null && connect.Password is null ? ReasonCode.NotAuthorized
                : ReasonCode.BadUserNameOrPassword,
                result.ErrorMessage ?? "authentication failed");
            return;
        }

        // The account's state (made with its first client, on its JetStream), as nats-server gets the account's session
        // manager right after authentication.
        MqttAccount state;
        try
        {
            state = handler.Accounts.Get(connected.Account);
            accountState = state;
            await state.WaitReadyAsync(cancellationToken).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is SessionStoreUnavailableException or ObjectDisposedException)
        {
            // The state (JetStream) is not there: refused, as nats-server refuses when it cannot reach its streams.
            will = null;
            await connected.DisposeAsync().ConfigureAwait(false);
            RefuseConnect(connect, ReasonCode.ServerUnavailable, ex.Message);
            return;
        }

        if (state.Refusal is { } refusal)
        {
            // The broker runs JetStream and the account has none: nats-server closes the client without a CONNACK
            // ("unable to connect: ...", closed as a protocol violation); MQTT 5 clients, which it does not serve, are told
            // "server unavailable".
            will = null;
            connected.Close("Protocol Violation");
            RefuseConnect(connect, ReasonCode.ServerUnavailable, "unable to connect: " + refusal, connAckV3: false);
            return;
        }

        if (state.Sessions.IsFlapping(clientId))
        {
            // As nats-server (after authentication, within the account): hold a client that keeps taking its id over
            // for a second, then refuse it.
            MqttLog.Flapping(Logger, status.Name, clientId);
            will = null;
            connected.Close("Duplicate Client ID");
            await Task.Delay(SessionManager.FlapJail, cancellationToken).ConfigureAwait(false);
            status.CloseFor("duplicate client id");
            return;
        }

        // MQTT 5's no-local subscriptions open a second bus connection with the same credentials; 3.1.1 keeps none.
        buses = BusConnections.Create(handler.Bus, transport, v5 ? credentials : null, connected);
        AttachResult attached;
        try
        {
            attached = await state.Sessions.AttachAsync(this, clientId, connect.CleanStart, expiry, cancellationToken).ConfigureAwait(false);
        }
        catch (SessionStoreUnavailableException ex)
        {
            // The state (JetStream) is not there: refused, as nats-server refuses when it cannot reach its streams.
            will = null;
            RefuseConnect(connect, ReasonCode.ServerUnavailable, ex.Message);
            return;
        }

        if (attached.Previous is { } previous)
        {
            MqttLog.TakenOver(Logger, status.Name, clientId);
            previous.TakeOver(attached.Present);
        }

        session = attached.Session;
        StartParts(session, buses, state);
        packets.MarkConnected(keepAliveSeconds, v5);

        if (v5)
        {
            output.WriteConnAckV5(attached.Present, ReasonCode.Success, new ConnAckProperties
            {
                ReceiveMaximum = (ushort)Options.ReceiveMaximum,
                MaximumPacketSize = (uint)Options.MaxPacketSize,
                TopicAliasMaximum = (ushort)Options.TopicAliasMaximum,
                AssignedClientIdentifier = assigned ? clientId : null,
                ServerKeepAlive = serverKeepAlive,
                MaximumQos = Options.RejectQos2Publish ? (byte)1 : (byte)2,
            });
        }
        else
        {
            output.WriteConnAckV3(attached.Present, ReasonCode.Success);
        }

        MqttLog.Connected(Logger, status, v5 ? "5" : "3.1.1", keepAliveSeconds, connect.CleanStart);

        // Subscribed again to what a resumed session had (nats-server does it after CONNACK too), then the PUBRELs
        // of its outgoing QoS 2 exchanges go out again, and the shared subscriptions' QoS 2 deliveries kept for it.
        await subscriptions!.RestoreAsync(cancellationToken).ConfigureAwait(false);
        if (session!.Releasing.Length > 0)
        {
            OutboundQos.ResendReleases();
        }

        subscriptions.SendKept();
    }

    /// <summary>The checks nats-server makes after decoding, and those of MQTT 5 and of the broker's settings.</summary>
    private void ValidateConnect(ConnectPacket connect)
    {
        if (connect.AuthenticationMethod is not null)
        {
            throw new MqttProtocolException(ReasonCode.BadAuthenticationMethod, $"authentication method \"{connect.AuthenticationMethod}\" is not supported");
        }

        if (connect.ClientId.Length == 0 && !connect.CleanStart && !connect.IsV5)
        {
            throw new MqttProtocolException(ReasonCode.ClientIdentifierNotValid, "when client ID is empty, clean session flag must be set to 1");
        }

        if (connect.UserName is { Length: 0 } && !connect.IsV5)
        {
            throw new MqttProtocolException(ReasonCode.BadUserNameOrPassword, "empty user name not allowed");
        }

        if (Options.RejectQos2Publish && connect.Will is { Qos: 2 })
        {
            throw new MqttProtocolException(ReasonCode.QosNotSupported, "server does not accept QoS2 for Will messages");
        }

        if (!IsAuthorized(connect))
        {
            throw new MqttProtocolException(
                connect.UserName is null && connect.Password is null ? ReasonCode.NotAuthorized : ReasonCode.BadUserNameOrPassword,
                "authentication failed");
        }
    }

    /// <summary>
    /// How the client's bus connection authenticates: against the broker's users (user name and password, the password
    /// also as a token, as nats-server reads MQTT credentials; without credentials the <c>mqtt</c> block's no_auth_user,
    /// else the broker's; TLS certificates as the broker has them),
    /// or, when the <c>mqtt { }</c> block has an <c>authorization { }</c> of its own, which replaces the broker's for MQTT
    /// clients as in nats-server, as checked by the adapter with full permissions.
    /// </summary>
    private BusConnectOptions BusCredentials(ConnectPacket connect, string clientId)
    {
        var password = connect.Password is null ? null : Encoding.UTF8.GetString(connect.Password);
        var own = Options.Token is not null || Options.Username is not null;
        return new BusConnectOptions
        {
            Protocol = MqttPlugin.ProtocolName,
            Name = clientId,
            User = connect.UserName,
            Password = own ? null : password,
            Token = own ? null : password,
            AuthenticatedByAdapter = own,
            NoAuthUser = own ? null : Options.NoAuthUser,
            Account = own ? Options.Account : null,
        };
    }

    /// <summary>The <c>authorization { }</c> of the <c>mqtt { }</c> block: one user name and password, or a token given as the password.</summary>
    private bool IsAuthorized(ConnectPacket connect)
    {
        var password = connect.Password is null ? null : Encoding.UTF8.GetString(connect.Password);
        if (Options.Token is { } token)
        {
            return password is not null && FixedTimeEquals(password, token);
        }

        if (Options.Username is { } user)
        {
            return string.Equals(connect.UserName, user, StringComparison.Ordinal)
                && FixedTimeEquals(password ?? string.Empty, Options.Password ?? string.Empty);
        }

        return true;
    }

    private static bool FixedTimeEquals(string given, string expected)
        => CryptographicOperations.FixedTimeEquals(Encoding.UTF8.GetBytes(given), Encoding.UTF8.GetBytes(expected));

    /// <summary>
    /// Answers a refused CONNECT in the client's protocol, then closes: MQTT 5 gets a CONNACK with the reason code;
    /// 3.1.1 gets the return codes its specification defines (unacceptable version, identifier rejected, bad user name
    /// or password, not authorized) and is otherwise closed without a CONNACK, as nats-server does.
    /// </summary>
    /// <param name="connect">The refused CONNECT.</param>
    /// <param name="reason">The MQTT 5 reason code.</param>
    /// <param name="message">Why, logged and sent to MQTT 5 clients as the reason string.</param>
    /// <param name="connAckV3">Whether a 3.1.1 client gets a CONNACK for the reasons it defines; false where nats-server closes without one.</param>
    private void RefuseConnect(ConnectPacket connect, byte reason, string message, bool connAckV3 = true)
    {
        MqttLog.ConnectRefused(Logger, status.Name, reason, message);
        status.CloseFor("CONNECT refused: " + message);
        if (reason == ReasonCode.UnsupportedProtocolVersion && connect.Level != (byte)ProtocolLevel.V5)
        {
            output.WriteConnAckV3(false, ReasonCode.V3UnacceptableProtocolVersion);
        }
        else if (connect.IsV5)
        {
            // MQTT-3.2.2-19: not beyond the client's Maximum Packet Size (a CONNACK of 6 bytes and the property).
            var text = ControlPackets.ReasonBytes(message);
            var fits = text is null || connect.MaximumPacketSize == 0 || PacketWriter.PacketSize(3 + PacketWriter.VariableIntSize(3 + text.Length) + 3 + text.Length) <= connect.MaximumPacketSize;
            output.WriteConnAckV5(false, reason, new ConnAckProperties { ReasonString = fits ? message : null });
        }
        else if (connect.Level == (byte)ProtocolLevel.V311 && connAckV3
            && reason is ReasonCode.ClientIdentifierNotValid or ReasonCode.BadUserNameOrPassword or ReasonCode.NotAuthorized or ReasonCode.ServerUnavailable)
        {
            output.WriteConnAckV3(false, ReasonCode.ToV3ConnectReturnCode(reason));
        }
    }

    /// <summary>A 22-character random id, as nats-server's nuid-assigned ids.</summary>
    private static string NewClientId()
    {
        const string Alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        Span<byte> random = stackalloc byte[22];
        RandomNumberGenerator.Fill(random);
        Span<char> id = stackalloc char[22];
        for (var i = 0; i < id.Length; i++)
        {
            id[i] = Alphabet[random[i] % Alphabet.Length];
        }

        return new string(id);
    }
}
