using Broker.Core.Internal.Protocol;

namespace Broker.Core.Internal.Clients;

/// <summary>
/// What a NATS client asked for in CONNECT (nats-server's <c>ClientOpts</c>): verbose (+OK after each operation),
/// pedantic (subject checks on publish), echo, headers, no_responders, the protocol version, and its name, language and
/// version for /connz. Starts from nats-server's defaults (verbose, pedantic and echo on); each CONNECT applies over the
/// current values, a field it leaves out keeping its value. The connection copies echo, headers, no_responders and the
/// name into <see cref="ClientBase"/>, where routing reads them, as nats-server keeps <c>c.echo</c> and
/// <c>c.headers</c> beside <c>c.opts</c>.
/// </summary>
internal sealed class ConnectOptions
{
    private int protocol;
    private bool firstInfoPongSent;

    public bool Verbose { get; private set; } = true;

    public bool Pedantic { get; private set; } = true;

    public bool Echo { get; private set; } = true;

    /// <summary>Whether the client announced header support and the server allows headers.</summary>
    public bool Headers { get; private set; }

    public bool NoResponders { get; private set; }

    /// <summary>The CONNECT <c>protocol</c>: 1 means the client understands asynchronous INFO (cluster updates, LDM). Readable from any thread.</summary>
    public int Protocol => Volatile.Read(ref protocol);

    public string? Name { get; private set; }

    public string? Lang { get; private set; }

    public string? Version { get; private set; }

    /// <summary>Applies a CONNECT over the current options.</summary>
    /// <param name="connect">The CONNECT.</param>
    /// <param name="headersAllowed">Whether the server supports headers (<c>no_header_support</c> off).</param>
    public void Apply(ConnectMessage connect, bool headersAllowed)
    {
        Verbose = connect.Verbose ?? Verbose;
        Pedantic = connect.Pedantic ?? Pedantic;
        Echo = connect.Echo ?? Echo;
        Headers = headersAllowed && (connect.Headers ?? Headers);
        NoResponders = connect.NoResponders ?? NoResponders;
        protocol = connect.Protocol ?? protocol;
        Name = connect.Name ?? Name;
        Lang = connect.Lang ?? Lang;
        Version = connect.Version ?? Version;
    }

    /// <summary>
    /// True once: at the first PONG to a client that takes asynchronous INFO (protocol 1), when nats-server sends an
    /// INFO with what differs from the first one, such as its account's lower <c>max_payload</c> (client.go
    /// <c>processPing</c>). Called from the read loop only.
    /// </summary>
    public bool TakeFirstInfoPong()
    {
        if (firstInfoPongSent || protocol < 1)
        {
            return false;
        }

        firstInfoPongSent = true;
        return true;
    }

    /// <summary>
    /// Why nats-server refuses these options once the client is authenticated: a protocol version it does not know,
    /// or no_responders without headers; <see cref="CloseReason.None"/> when they are served.
    /// </summary>
    public CloseReason Refusal() =>
        protocol is < 0 or > 1 ? CloseReason.BadClientProtocol
        : NoResponders && !Headers ? CloseReason.NoRespondersRequiresHeaders
        : CloseReason.None;
}
