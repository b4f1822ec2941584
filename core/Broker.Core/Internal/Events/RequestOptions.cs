using System.Globalization;
using System.Text.Json;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The JSON body of a <c>$SYS.REQ</c> request: the event filter (nats-server's <c>EventFilterOptions</c>:
/// <c>server_name</c>, <c>cluster</c>, <c>host</c>, <c>tags</c>, <c>domain</c>) and the page's own options, turned into
/// the query the HTTP page reads (<c>subscriptions</c> is <c>subs</c>, <c>account</c> is <c>acc</c>, a numeric connz
/// <c>state</c> is its name), so both answer from the same code.
/// </summary>
internal sealed class RequestOptions
{
    // Per JSON option: the query name, or how to turn the value into query pairs.
    private static readonly Dictionary<string, string> QueryNames = new(StringComparer.Ordinal)
    {
        ["sort"] = "sort",
        ["auth"] = "auth",
        ["offset"] = "offset",
        ["limit"] = "limit",
        ["cid"] = "cid",
        ["mqtt_client"] = "mqtt_client",
        ["user"] = "user",
        ["acc"] = "acc",
        ["account"] = "acc",
        ["test"] = "test",
        ["accounts"] = "accounts",
        ["streams"] = "streams",
        ["consumer"] = "consumers",
        ["config"] = "config",
        ["leader_only"] = "leader-only",
        ["js-enabled-only"] = "js-enabled-only",
        ["js-server-only"] = "js-server-only",
        ["include_unused"] = "unused",
    };

    private RequestOptions()
    {
    }

    public string ServerName { get; private set; } = "";

    public string Cluster { get; private set; } = "";

    public string Host { get; private set; } = "";

    public string Domain { get; private set; } = "";

    public IReadOnlyList<string> Tags { get; private set; } = [];

    /// <summary>The page options as query pairs.</summary>
    public List<KeyValuePair<string, string>> Query { get; } = [];

    /// <summary>The accounts of an account STATZ request (<c>accounts</c> as a list), or null.</summary>
    public IReadOnlyList<string>? Accounts { get; private set; }

    /// <summary>Whether accounts without connections are wanted (<c>include_unused</c>).</summary>
    public bool IncludeUnused { get; private set; }

    /// <summary>Reads <paramref name="body"/> (empty: no options); <see langword="null"/> with <paramref name="error"/> when it is not valid.</summary>
    public static RequestOptions? Parse(ReadOnlySpan<byte> body, out string? error)
    {
        var options = new RequestOptions();
        error = null;
        if (body.IsEmpty)
        {
            return options;
        }

        try
        {
            var reader = new Utf8JsonReader(body);
            using var document = JsonDocument.ParseValue(ref reader);
            if (document.RootElement.ValueKind != JsonValueKind.Object)
            {
                error = "json: cannot unmarshal " + GoKind(document.RootElement.ValueKind) + " into Go value of type struct";
                return null;
            }

            foreach (var property in document.RootElement.EnumerateObject())
            {
                options.Read(property);
            }

            return options;
        }
        catch (JsonException ex)
        {
            error = ex.Message;
            return null;
        }
        catch (FormatException ex)
        {
            error = ex.Message;
            return null;
        }
    }

    /// <summary>Whether the request is for another server (nats-server <c>filterRequest</c>): then it gets no answer.</summary>
    public bool FiltersOut(BrokerCore core)
    {
        if (ServerName.Length > 0 && !core.ServerName.Contains(ServerName, StringComparison.Ordinal))
        {
            return true;
        }

        if (Host.Length > 0 && !core.Options.Host.Contains(Host, StringComparison.Ordinal))
        {
            return true;
        }

        // No cluster, no server tags and no JetStream domain here: any of these asked for is another server's.
        return Cluster.Length > 0 || Tags.Count > 0 || Domain.Length > 0;
    }

    private void Read(JsonProperty property)
    {
        var value = property.Value;
        switch (property.Name)
        {
            case "server_name":
                ServerName = Text(property);
                return;
            case "cluster":
                Cluster = Text(property);
                return;
            case "host":
                Host = Text(property);
                return;
            case "domain":
                Domain = Text(property);
                return;
            case "tags":
                Tags = value.ValueKind == JsonValueKind.Null ? [] : [.. List(property)];
                return;
            case "subscriptions":
                if (Flag(property))
                {
                    Query.Add(new("subs", "true"));
                }

                return;
            case "subscriptions_detail":
                if (Flag(property))
                {
                    Query.Add(new("subs", "detail"));
                }

                return;
            case "state":
                Query.Add(new("state", Number(property) switch { 1 => "closed", 2 => "all", _ => "open" }));
                return;
            case "accounts" when value.ValueKind == JsonValueKind.Array:
                Accounts = [.. List(property)];
                return;
            case "include_unused":
                IncludeUnused = Flag(property);
                break;
        }

        if (QueryNames.TryGetValue(property.Name, out var name))
        {
            var text = value.ValueKind switch
            {
                JsonValueKind.True => "true",
                JsonValueKind.False => "false",
                JsonValueKind.Number => value.GetRawText(),
                JsonValueKind.String => value.GetString() ?? "",
                JsonValueKind.Null => null,
                _ => throw Mismatch(property),
            };
            if (text is not null)
            {
                Query.Add(new(name, text));
            }
        }
    }

    private static string Text(JsonProperty property) => property.Value.ValueKind switch
    {
        JsonValueKind.String => property.Value.GetString() ?? "",
        JsonValueKind.Null => "",
        _ => throw Mismatch(property),
    };

    private static bool Flag(JsonProperty property) => property.Value.ValueKind switch
    {
        JsonValueKind.True => true,
        JsonValueKind.False or JsonValueKind.Null => false,
        _ => throw Mismatch(property),
    };

    private static long Number(JsonProperty property) => property.Value.ValueKind switch
    {
        JsonValueKind.Number when property.Value.TryGetInt64(out var number) => number,
        JsonValueKind.Null => 0,
        _ => throw Mismatch(property),
    };

    private static IEnumerable<string> List(JsonProperty property)
    {
        if (property.Value.ValueKind != JsonValueKind.Array)
        {
            throw Mismatch(property);
        }

        foreach (var item in property.Value.EnumerateArray())
        {
            yield return item.ValueKind == JsonValueKind.String ? item.GetString() ?? "" : throw Mismatch(property);
        }
    }

    // Go's json.Unmarshal wording for a value of the wrong type.
    private static FormatException Mismatch(JsonProperty property) =>
        new(string.Create(CultureInfo.InvariantCulture, $"json: cannot unmarshal {GoKind(property.Value.ValueKind)} into Go struct field .{property.Name}"));

    private static string GoKind(JsonValueKind kind) => kind switch
    {
        JsonValueKind.String => "string",
        JsonValueKind.Number => "number",
        JsonValueKind.True or JsonValueKind.False => "bool",
        JsonValueKind.Array => "array",
        JsonValueKind.Object => "object",
        _ => "null",
    };
}
