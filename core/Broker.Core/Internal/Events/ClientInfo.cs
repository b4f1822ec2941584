using System.Globalization;
using System.Text.Json;
using Broker.Core.Internal.Auth;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Jwt;

namespace Broker.Core.Internal.Events;

/// <summary>
/// A client's identity as nats-server's <c>ClientInfo</c> (events.go) carries it, and the one writer of that JSON:
/// the <c>client</c> of connect, disconnect and authentication error events, and the <c>Nats-Request-Info</c> header of
/// service imports (<see cref="Accounts.RequestInfoHeader"/>). Fields in nats-server's order, empty ones left out as
/// Go's <c>omitempty</c> does. An auth callout request carries the same identity in nats-io/jwt's shape
/// (<c>ClientInformation</c>), made by <see cref="ToInformation"/>. Captured once, where it happened; read later.
/// </summary>
internal class ClientInfo
{
    // The start and stop as captured from a connection, formatted only when written (off the connect and close paths).
    private DateTimeOffset? startedAt;
    private DateTimeOffset? stoppedAt;

    /// <summary>The start as read from JSON (written as it was read), or null.</summary>
    public string? Start { get; set; }

    public string? Host { get; set; }

    public ulong Id { get; set; }

    public string Account { get; set; } = "";

    public string? Service { get; set; }

    public string? User { get; set; }

    public string? Name { get; set; }

    public string? Lang { get; set; }

    public string? Version { get; set; }

    /// <summary>Round-trip time in nanoseconds (a Go <c>time.Duration</c>); 0 (left out) until measured or when not reported.</summary>
    public long Rtt { get; set; }

    public string? Server { get; set; }

    /// <summary>The stop as read from JSON, or null.</summary>
    public string? Stop { get; set; }

    public string? Jwt { get; set; }

    public string? IssuerKey { get; set; }

    public string? NameTag { get; set; }

    public IReadOnlyList<string>? Tags { get; set; }

    public string? Kind { get; set; }

    public string? ClientType { get; set; }

    /// <summary>An MQTT client's id (nats-server's <c>client_id</c>).</summary>
    public string? ClientId { get; set; }

    /// <summary>
    /// The identity of <paramref name="client"/> (a connection) as it is now, named <paramref name="user"/>: start, host,
    /// id, account, name, lang, version, a JWT user's <c>jwt</c>, <c>issuer_key</c>, <c>name_tag</c> and <c>tags</c>
    /// (from <paramref name="jwt"/>, else the connection's), kind and client type.
    /// </summary>
    public static ClientInfo Of(ClientBase client, string? user, JwtUser? jwt = null)
    {
        var connection = (IClientConnection)client;
        var address = connection.RemoteEndPoint?.Address;
        jwt ??= (client as NatsClient)?.JwtUser;
        var type = client is NatsClient nats ? nats.ClientType : connection.ConnectionType;
        return new ClientInfo
        {
            startedAt = client.StartedAt,
            Host = address is null ? null : (address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address).ToString(),
            Id = client.Id,
            Account = client.Account.Name,
            User = user,
            Name = client.Name,
            Lang = connection.Lang,
            Version = connection.ClientVersion,
            Jwt = jwt?.Token,
            IssuerKey = jwt?.IssuerKey,
            NameTag = jwt?.Claims.Name,
            Tags = jwt?.Claims.Nats.Tags,
            Kind = "Client",
            ClientType = type,
            ClientId = type == "mqtt" ? client.Name : null,
        };
    }

    /// <summary>Marks the client stopped at <paramref name="stop"/> (a disconnect's <c>stop</c>).</summary>
    public void StoppedAt(DateTimeOffset stop) => stoppedAt = stop;

    /// <summary>Formats a time as Go's RFC 3339 with nanoseconds does (UTC, trailing zeros dropped).</summary>
    public static string FormatTime(DateTimeOffset time) =>
        time.UtcDateTime.ToString("yyyy-MM-dd'T'HH:mm:ss.FFFFFFF'Z'", CultureInfo.InvariantCulture);

    /// <summary>The same identity in nats-io/jwt's <c>ClientInformation</c> shape (an auth callout request's <c>client_info</c>).</summary>
    public CalloutClientInfo ToInformation(string? nonce) => new()
    {
        Host = Host,
        Id = Id,
        User = User,
        Name = Name,
        Tags = Tags is { Count: > 0 } tags ? [.. tags] : null,
        NameTag = NameTag,
        Kind = Kind,
        Type = ClientType,
        Mqtt = ClientId,
        Nonce = nonce,
    };

    /// <summary>Writes the JSON object.</summary>
    public void Write(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        WriteIf(writer, "start", Start ?? (startedAt is { } started ? FormatTime(started) : null));
        WriteIf(writer, "host", Host);
        if (Id != 0)
        {
            writer.WriteNumber("id", Id);
        }

        WriteIf(writer, "acc", Account);
        WriteIf(writer, "svc", Service);
        WriteIf(writer, "user", User);
        WriteIf(writer, "name", Name);
        WriteIf(writer, "lang", Lang);
        WriteIf(writer, "ver", Version);
        if (Rtt != 0)
        {
            writer.WriteNumber("rtt", Rtt);
        }

        WriteIf(writer, "server", Server);
        WriteIf(writer, "stop", Stop ?? (stoppedAt is { } stopped ? FormatTime(stopped) : null));
        WriteIf(writer, "jwt", Jwt);
        WriteIf(writer, "issuer_key", IssuerKey);
        WriteIf(writer, "name_tag", NameTag);
        if (Tags is { Count: > 0 } tags)
        {
            writer.WritePropertyName("tags");
            writer.WriteStartArray();
            foreach (var tag in tags)
            {
                writer.WriteStringValue(tag);
            }

            writer.WriteEndArray();
        }

        WriteIf(writer, "kind", Kind);
        WriteIf(writer, "client_type", ClientType);
        WriteIf(writer, "client_id", ClientId);
        writer.WriteEndObject();
    }

    /// <summary>Takes one property of the JSON object, as <see cref="Write"/> names it; false for one it does not know.</summary>
    protected bool Read(JsonProperty property)
    {
        var value = property.Value;
        switch (property.Name)
        {
            case "start": Start = value.GetString(); break;
            case "host": Host = value.GetString(); break;
            case "id": Id = value.GetUInt64(); break;
            case "acc": Account = value.GetString() ?? ""; break;
            case "svc": Service = value.GetString(); break;
            case "user": User = value.GetString(); break;
            case "name": Name = value.GetString(); break;
            case "lang": Lang = value.GetString(); break;
            case "ver": Version = value.GetString(); break;
            case "rtt": Rtt = value.GetInt64(); break;
            case "server": Server = value.GetString(); break;
            case "stop": Stop = value.GetString(); break;
            case "jwt": Jwt = value.GetString(); break;
            case "issuer_key": IssuerKey = value.GetString(); break;
            case "name_tag": NameTag = value.GetString(); break;
            case "tags": Tags = [.. value.EnumerateArray().Select(t => t.GetString() ?? "")]; break;
            case "kind": Kind = value.GetString(); break;
            case "client_type": ClientType = value.GetString(); break;
            case "client_id": ClientId = value.GetString(); break;
            default: return false;
        }

        return true;
    }

    private static void WriteIf(Utf8JsonWriter writer, string name, string? value)
    {
        if (!string.IsNullOrEmpty(value))
        {
            writer.WriteString(name, value);
        }
    }
}
