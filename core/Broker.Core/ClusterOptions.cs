using Broker.Core.Auth;

namespace Broker.Core;

/// <summary>
/// Routes to other cluster members (nats-server's <c>cluster { }</c>): the broker joins a full mesh of brokers and
/// nats-servers that carry core NATS (interest, messages, queue groups, request/reply) for every account. JetStream is
/// not shared: the broker announces none to the cluster, and its own JetStream, if on, serves only its own clients.
/// Default: off (<see cref="Port"/> 0).
/// </summary>
public sealed class ClusterOptions
{
    /// <summary>
    /// The cluster's name; members with another name are refused. Default <see langword="null"/>: a random name that
    /// yields to a configured or larger one (nats-server's dynamic cluster name).
    /// </summary>
    public string? Name { get; set; }

    /// <summary>The address to accept routes on. Default <c>0.0.0.0</c>.</summary>
    public string Host { get; set; } = "0.0.0.0";

    /// <summary>The port to accept routes on; 0 turns routes off, -1 picks a free port. Default 0.</summary>
    public int Port { get; set; }

    /// <summary>The members to connect to (<c>nats-route://[user:password@]host:port</c>), dialled until the broker stops. Default empty.</summary>
    public IList<string> Routes { get; set; } = [];

    /// <summary>The user members must send (and the broker sends to members found through gossip). Default none: no authentication.</summary>
    public string? Username { get; set; }

    /// <summary>The password that goes with <see cref="Username"/>. Default none.</summary>
    public string? Password { get; set; }

    /// <summary>How long an accepted route may take to authenticate. Default 2 seconds.</summary>
    public TimeSpan AuthTimeout { get; set; } = TimeSpan.FromSeconds(2);

    /// <summary>Whether the other members' client URLs are kept out of the clients' INFO (<c>connect_urls</c>). Default <see langword="false"/>.</summary>
    public bool NoAdvertise { get; set; }

    /// <summary>How many times a member learnt through gossip (an implicit route) is dialled again after a failure. Default 0.</summary>
    public int ConnectRetries { get; set; }

    /// <summary>
    /// TLS on every route (<c>cluster.tls</c>, the keys of a leaf node remote's <c>tls { }</c>): both sides shake hands
    /// before anything else is sent, the dialling member presenting <see cref="LeafRemoteTlsOptions.CertFile"/> as its
    /// client certificate and the accepting one requiring it (nats-server forces <c>verify</c> on routes); both
    /// certificates must chain to <see cref="LeafRemoteTlsOptions.CaFile"/> (else the system's roots), and a dialled
    /// member's must name the route URL's host unless <see cref="LeafRemoteTlsOptions.Insecure"/>. Default
    /// <see langword="null"/>: routes in clear text.
    /// </summary>
    public LeafRemoteTlsOptions? Tls { get; set; }

    /// <summary>
    /// The routes' permissions (<c>cluster.permissions</c>, nats-server's <c>RoutePermissions</c>):
    /// <see cref="PermissionsOptions.Publish"/> is <c>import</c>, the subjects whose interest the broker asks members
    /// for (RS+ goes out for no others, so members send no messages on them: <c>canImport</c>);
    /// <see cref="PermissionsOptions.Subscribe"/> is <c>export</c>, the subjects members may receive (a member's RS+
    /// outside them is ignored, <c>canExport</c>, and no message on a denied subject is sent even to a wider interest).
    /// <see cref="PermissionsOptions.AllowResponses"/> is refused. Default <see langword="null"/>: every subject both ways.
    /// </summary>
    public PermissionsOptions? Permissions { get; set; }

    /// <summary>
    /// The route address members are told to dial this broker at (<c>cluster.advertise</c>, <c>host[:port]</c>, the
    /// route port when it has none): the route INFO's <c>host</c>, <c>port</c> and <c>ip</c>, which members gossip to
    /// the others. Default <see langword="null"/>: the route listener's address, and members use the address they see.
    /// </summary>
    public string? Advertise { get; set; }

    /// <summary>Whether routes are on (<see cref="Port"/> not 0).</summary>
    public bool IsEnabled => Port != 0;

    /// <summary>Creates a deep copy.</summary>
    /// <returns>The copy.</returns>
    public ClusterOptions Clone()
    {
        var copy = (ClusterOptions)MemberwiseClone();
        copy.Routes = [.. Routes];
        copy.Tls = Tls?.Clone();
        copy.Permissions = Permissions?.Clone();
        return copy;
    }

    /// <summary>Checks the settings with nats-server's texts.</summary>
    /// <exception cref="InvalidOperationException">A setting is invalid; the message says why.</exception>
    public void Validate()
    {
        if (Routes.Count > 0 && !IsEnabled)
        {
            throw new InvalidOperationException("solicited routes require cluster capabilities, e.g. --cluster");
        }

        if (!IsEnabled)
        {
            return;
        }

        if (Port is < -1 or > 65535)
        {
            throw new InvalidOperationException($"cluster: port {Port} is out of range");
        }

        Tls?.Validate();
        if (Permissions is { } permissions)
        {
            permissions.Validate();
            if (permissions.AllowResponses is not null)
            {
                throw new InvalidOperationException("Cluster permissions do not support dynamic responses");
            }
        }
        foreach (var route in Routes)
        {
            if (!Uri.TryCreate(route.Trim(), UriKind.Absolute, out var uri) || uri.Host.Length == 0)
            {
                throw new InvalidOperationException($"error parsing route url [\"{route}\"]");
            }
        }
    }
}
