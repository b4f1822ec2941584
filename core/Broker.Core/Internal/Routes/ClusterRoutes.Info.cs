using System.Net;
using System.Text;
using System.Text.Json;

namespace Broker.Core.Internal.Routes;

/// <summary>
/// What the cluster tells members and checks of them: the route INFO (advertised address, TLS, permissions), the
/// credentials sent when dialling and checked when accepting.
/// </summary>
internal sealed partial class ClusterRoutes
{
    /// <summary>Our route INFO (nats-server's <c>routeInfo</c>), with a nonce on the first one of a connection.</summary>
    public byte[] InfoLine(bool withNonce, bool lameDuckMode = false)
    {
        var info = new RouteInfo
        {
            ServerId = Server.ServerId,
            ServerName = Server.ServerName,
            Version = Protocol.ServerInfo.CompatibleServerVersion,
            Proto = 2,
            Host = advertised?.Host ?? (EndPoint is { } endPoint && !endPoint.Address.Equals(IPAddress.Any) && !endPoint.Address.Equals(IPAddress.IPv6Any) ? endPoint.Address.ToString() : Options.Host),
            Port = advertised?.Port ?? EndPoint?.Port ?? Options.Port,
            Ip = advertised is { } a ? $"nats-route://{(a.Host.Contains(':', StringComparison.Ordinal) ? "[" + a.Host + "]" : a.Host)}:{a.Port}/" : null,
            Headers = !Server.Options.NoHeaderSupport,
            AuthRequired = AuthRequired,
            TlsRequired = Opener.TlsRequired,
            TlsVerify = Opener.TlsRequired,
            MaxPayload = Server.Options.MaxPayload,
            Nonce = withNonce ? Events.EventIds.Next()[..11] : null,
            Cluster = Name,
            Dynamic = IsNameDynamic,
            ConnectUrls = Urls.Own,
            LameDuckMode = lameDuckMode || lameDuck,
            Import = Leaf.LeafInfo.SubjectPermission.From(Options.Permissions?.Publish),
            Export = Leaf.LeafInfo.SubjectPermission.From(Options.Permissions?.Subscribe),
        };
        return Encoding.UTF8.GetBytes("INFO " + JsonSerializer.Serialize(info, RouteJsonContext.Default.RouteInfo) + "\r\n");
    }

    // setRouteInfoHostPortAndIP with Go's parseHostPort: host[:port], the route port when none is given.
    private static (string Host, int Port)? Advertised(string? advertise, int routePort)
    {
        if (string.IsNullOrEmpty(advertise))
        {
            return null;
        }

        var text = advertise.Trim();
        var bracket = text.StartsWith('[') ? text.IndexOf(']', StringComparison.Ordinal) : -1;
        var colon = text.LastIndexOf(':');
        string host;
        string port;
        if (bracket > 0)
        {
            host = text[1..bracket];
            port = bracket + 1 < text.Length && text[bracket + 1] == ':' ? text[(bracket + 2)..] : routePort.ToString(System.Globalization.CultureInfo.InvariantCulture);
        }
        else if (colon < 0)
        {
            (host, port) = (text, routePort.ToString(System.Globalization.CultureInfo.InvariantCulture));
        }
        else if (text.IndexOf(':', StringComparison.Ordinal) != colon)
        {
            throw new InvalidOperationException($"Error setting route INFO with Cluster.Advertise value of {advertise}, err=address {text}: too many colons in address");
        }
        else
        {
            (host, port) = (text[..colon], text[(colon + 1)..]);
        }

        return int.TryParse(port.Trim(), System.Globalization.NumberStyles.AllowLeadingSign, System.Globalization.CultureInfo.InvariantCulture, out var number)
            ? (host.Trim(), number)
            : throw new InvalidOperationException($"Error setting route INFO with Cluster.Advertise value of {advertise}, err=strconv.Atoi: parsing \"{port.Trim()}\": invalid syntax");
    }

    /// <summary>The credentials to send when dialling <paramref name="url"/>: its own, else the cluster's.</summary>
    public (string User, string? Password)? UserFor(Uri url)
    {
        var info = url.UserInfo;
        if (info.Length > 0)
        {
            var colon = info.IndexOf(':', StringComparison.Ordinal);
            return colon < 0 ? (Uri.UnescapeDataString(info), null) : (Uri.UnescapeDataString(info[..colon]), Uri.UnescapeDataString(info[(colon + 1)..]));
        }

        return AuthRequired ? (Options.Username!, Options.Password) : null;
    }

    /// <summary>Checks an accepted route's CONNECT credentials (nats-server's <c>checkRouterAuth</c>).</summary>
    public bool Authenticate(string? user, string? password)
        => !AuthRequired || (string.Equals(user, Options.Username, StringComparison.Ordinal) && string.Equals(password ?? "", Options.Password ?? "", StringComparison.Ordinal));
}
