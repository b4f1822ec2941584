using System.Buffers;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;
using Broker.Core.Internal.Monitoring;
using Broker.Core.Internal.Monitoring.Http;
using Broker.Core.Internal.Monitoring.Models;

namespace Broker.Core.Internal.Events;

/// <summary>
/// The requests the system account answers (nats-server events.go <c>initEventTracking</c>):
/// <c>$SYS.REQ.SERVER.PING</c> (STATSZ), <c>$SYS.REQ.SERVER.PING.&lt;page&gt;</c> and <c>$SYS.REQ.SERVER.&lt;id&gt;.&lt;page&gt;</c>,
/// <c>$SYS.REQ.ACCOUNT.&lt;acc&gt;.&lt;page&gt;</c> and <c>$SYS.REQ.ACCOUNT.PING.STATZ</c>. Each page is the HTTP monitoring
/// page's answer (<see cref="MonitorEndpoints"/>) with the request body's options as its query, in the envelope
/// <see cref="SystemPublisher"/> writes; a request whose filter names another server gets no answer, nor one
/// without a reply subject.
/// </summary>
internal sealed class SystemRequests
{
    /// <summary>The server pages, as nats-server names them.</summary>
    public static readonly string[] ServerPages = ["VARZ", "SUBSZ", "CONNZ", "ROUTEZ", "GATEWAYZ", "LEAFZ", "ACCOUNTZ", "JSZ", "HEALTHZ", "STATSZ"];

    /// <summary>The account pages, as nats-server names them.</summary>
    public static readonly string[] AccountPages = ["SUBSZ", "CONNZ", "LEAFZ", "JSZ", "INFO", "STATZ", "CONNS"];

    private static readonly string[] JszTotals = ["memory", "storage", "reserved_memory", "reserved_storage", "accounts", "ha_assets"];
    private static readonly string[] JszCounts = ["streams", "consumers", "messages", "bytes"];

    private readonly BrokerCore core;
    private readonly MonitorEndpoints endpoints;
    private readonly SystemPublisher publisher;
    private readonly SystemEvents events;
    private readonly IMonitoringEndpoint? jsz;

    public SystemRequests(BrokerCore core, MonitorEndpoints endpoints, SystemPublisher publisher, SystemEvents events, IMonitoringEndpoint? jsz)
    {
        this.core = core;
        this.endpoints = endpoints;
        this.publisher = publisher;
        this.events = events;
        this.jsz = jsz;
    }

    /// <summary>Subscribes the system client to every request subject.</summary>
    public List<IBusSubscription> Subscribe(IBusClient client)
    {
        var subscriptions = new List<IBusSubscription>
        {
            client.Subscribe("$SYS.REQ.SERVER.PING", null, (in BusMessage m) => Statsz(Copy(m))),
            client.Subscribe("$SYS.REQ.ACCOUNT.PING.STATZ", null, (in BusMessage m) => AccountStatz(Copy(m), account: null)),
        };
        foreach (var page in ServerPages)
        {
            var name = page;
            BusMessageHandler handler = (in BusMessage m) => ServerPage(name, Copy(m));
            subscriptions.Add(client.Subscribe("$SYS.REQ.SERVER.PING." + page, null, handler));
            subscriptions.Add(client.Subscribe("$SYS.REQ.SERVER." + core.ServerId + "." + page, null, handler));
        }

        foreach (var page in AccountPages)
        {
            var name = page;
            subscriptions.Add(client.Subscribe("$SYS.REQ.ACCOUNT.*." + page, null, (in BusMessage m) => AccountPage(name, Copy(m))));
        }

        return subscriptions;
    }

    private static Request Copy(in BusMessage message) =>
        new(Encoding.UTF8.GetString(message.Subject), Encoding.UTF8.GetString(message.ReplyTo), message.Payload.ToArray());

    /// <summary>
    /// STATSZ: nats-server's <c>statszReq</c>, which answers <c>{"server","statsz"}</c> without the envelope, and without
    /// a reply subject publishes it on the server's STATSZ subject.
    /// </summary>
    private void Statsz(Request request)
    {
        var reply = request.Reply.Length > 0 ? request.Reply : events.StatszSubject;
        if (RequestOptions.Parse(request.Body, out var error) is not { } options)
        {
            publisher.RespondError(reply, 400, error!, withNullData: false);
            return;
        }

        if (!options.FiltersOut(core))
        {
            publisher.Publish(reply, new StatszEvent(reply, endpoints, core), new ArrayBufferWriter<byte>(512));
        }
    }

    private void ServerPage(string page, Request request)
    {
        if (page == "STATSZ")
        {
            Statsz(request);
            return;
        }

        Answer(request, options => page switch
        {
            "VARZ" => endpoints.Varz(),
            "SUBSZ" => endpoints.Subsz(Query(options), statisticsAloneWhenEmpty: false),
            "CONNZ" => endpoints.Connz(Query(options)),
            "ACCOUNTZ" => endpoints.Accounts.Accountz(Query(options)),
            "HEALTHZ" => endpoints.Healthz(Query(options)),
            "JSZ" => Jsz(Query(options)),
            "ROUTEZ" => endpoints.Routez(Query(options)),
            "GATEWAYZ" => Page(w => { w.WriteStartObject("outbound_gateways"); w.WriteEndObject(); w.WriteStartObject("inbound_gateways"); w.WriteEndObject(); }),
            _ => endpoints.Leafz(Query(options)),
        });
    }

    private void AccountPage(string page, Request request)
    {
        // $SYS.REQ.ACCOUNT.<acc>.<page>: the account is the fourth token.
        var tokens = request.Subject.Split('.');
        if (tokens.Length != 5)
        {
            return;
        }

        var account = tokens[3];
        switch (page)
        {
            case "STATZ":
                // The PING form is its own subscription (nats-server filters it out here too).
                if (account != "PING")
                {
                    AccountStatz(request, account);
                }

                return;
            case "CONNS":
                Conns(request, account);
                return;
        }

        Answer(request, options => page switch
        {
            "SUBSZ" => endpoints.Subsz(Query(options, ("subs", "true"), ("acc", account)), statisticsAloneWhenEmpty: false),
            "CONNZ" => endpoints.Connz(Query(options, ("acc", account))),
            "JSZ" => JszAccount(account, options),
            "INFO" => AccountInfo(account),
            _ => endpoints.Leafz(Query(options, ("acc", account))),
        });
    }

    /// <summary>
    /// The request's options, or null when nothing is to be answered: no reply subject, a filter that leaves this
    /// server out, or a body that does not parse (answered with nats-server's 400 here).
    /// </summary>
    private RequestOptions? Options(Request request)
    {
        if (request.Reply.Length == 0)
        {
            return null;
        }

        if (RequestOptions.Parse(request.Body, out var error) is not { } options)
        {
            publisher.RespondError(request.Reply, 400, error!, withNullData: false);
            return null;
        }

        return options.FiltersOut(core) ? null : options;
    }

    /// <summary>nats-server's <c>zReq</c>: options, filter, the page, then <c>data</c> or <c>error</c>.</summary>
    private void Answer(Request request, Func<RequestOptions, HttpResponse> page)
    {
        if (Options(request) is not { } options)
        {
            return;
        }

        var response = page(options);
        if (response.StatusCode == 200)
        {
            publisher.Respond(request.Reply, response.Body);
        }
        else
        {
            // The page refused its options: nats-server's page functions return an error, answered as 500.
            publisher.RespondError(request.Reply, 500, Encoding.UTF8.GetString(response.Body).TrimEnd('\n'), withNullData: true);
        }
    }

    private void AccountStatz(Request request, string? account)
    {
        if (Options(request) is not { } options)
        {
            return;
        }

        IReadOnlyCollection<string>? names = account is null ? (options.Accounts is { Count: > 0 } listed ? listed : null) : [account];
        var statz = endpoints.Accounts.AccountStats(names, options.IncludeUnused);
        if (statz.Count == 0 && !options.IncludeUnused)
        {
            return;
        }

        publisher.Respond(request.Reply, MonitorJson.Serialize(new AccountStatz { ServerId = core.ServerId, Now = DateTime.UtcNow, Accounts = statz }));
    }

    /// <summary>nats-server's <c>connsRequest</c>: the account's CONNS event to the requester, if it has connections here.</summary>
    private void Conns(Request request, string account)
    {
        if (request.Body.Length > 0)
        {
            try
            {
                using var document = JsonDocument.Parse(request.Body);
                if (document.RootElement.TryGetProperty("acc", out var named) && named.GetString() != account)
                {
                    return;
                }
            }
            catch (JsonException)
            {
                return;
            }
        }

        if (request.Reply.Length == 0 || !core.Accounts.TryGet(account, out var found))
        {
            return;
        }

        if (found.Connections > 0)
        {
            publisher.Publish(request.Reply, events.Conns(found, request.Reply), new ArrayBufferWriter<byte>(512));
        }
    }

    private HttpResponse AccountInfo(string account)
    {
        var response = endpoints.Accounts.Accountz(Query(null, ("acc", account)));
        if (response.StatusCode != 200)
        {
            return response;
        }

        using var document = JsonDocument.Parse(response.Body);
        return HttpResponse.Json(Encoding.UTF8.GetBytes(document.RootElement.GetProperty("account_detail").GetRawText()));
    }

    /// <summary>JetStream's own /jsz page, or nats-server's answer for a server without JetStream.</summary>
    private HttpResponse Jsz(QueryString query)
    {
        if (jsz is null)
        {
            return Page(w =>
            {
                w.WriteBoolean("disabled", true);
                w.WriteStartObject("config");
                w.WriteNumber("max_memory", 0);
                w.WriteNumber("max_storage", 0);
                w.WriteEndObject();
                foreach (var name in JszTotals)
                {
                    w.WriteNumber(name, 0);
                }

                w.WriteStartObject("api");
                w.WriteNumber("level", 0);
                w.WriteNumber("total", 0);
                w.WriteNumber("errors", 0);
                w.WriteEndObject();
                foreach (var name in JszCounts)
                {
                    w.WriteNumber(name, 0);
                }
            });
        }

        var answer = jsz.Handle(query.ToDictionary());
        return new HttpResponse(answer.StatusCode, answer.ContentType, answer.Body.ToArray());
    }

    /// <summary>One account's JetStream detail (nats-server <c>JszAccount</c>): the /jsz account entry of that account.</summary>
    private HttpResponse JszAccount(string account, RequestOptions options)
    {
        if (jsz is null)
        {
            return HttpResponse.Text(500, "jetstream not enabled");
        }

        if (!core.Accounts.TryGet(account, out _))
        {
            return HttpResponse.Text(500, $"account \"{account}\" not found");
        }

        var response = Jsz(Query(options, ("acc", account), ("accounts", "true")));
        if (response.StatusCode != 200)
        {
            return response;
        }

        using var document = JsonDocument.Parse(response.Body);
        if (document.RootElement.TryGetProperty("account_details", out var details) && details.ValueKind == JsonValueKind.Array)
        {
            foreach (var detail in details.EnumerateArray())
            {
                if (detail.TryGetProperty("name", out var name) && name.GetString() == account)
                {
                    return HttpResponse.Json(Encoding.UTF8.GetBytes(detail.GetRawText()));
                }
            }
        }

        return HttpResponse.Text(500, $"account \"{account}\" not jetstream enabled");
    }

    /// <summary>A page of a feature this broker does not have: <c>server_id</c>, <c>now</c>, then its empty fields.</summary>
    private HttpResponse Page(Action<Utf8JsonWriter> fields)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(buffer))
        {
            writer.WriteStartObject();
            writer.WriteString("server_id", core.ServerId);
            writer.WriteString("now", DateTime.UtcNow);
            fields(writer);
            writer.WriteEndObject();
        }

        return HttpResponse.Json(buffer.WrittenSpan.ToArray());
    }

    private static QueryString Query(RequestOptions? options, params (string Name, string Value)[] fixedPairs)
    {
        var pairs = new List<KeyValuePair<string, string>>();
        foreach (var (name, value) in fixedPairs)
        {
            pairs.Add(new(name, value));
        }

        if (options is not null)
        {
            pairs.AddRange(options.Query);
        }

        // QueryString.Get takes the first value of a name: the fixed pairs (the subject's account) win.
        return QueryString.From(pairs);
    }

    private sealed record Request(string Subject, string Reply, byte[] Body);
}
