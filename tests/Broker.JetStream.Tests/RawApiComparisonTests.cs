using System.Text;
using System.Text.Json.Nodes;
using NATS.Client.Core;

namespace Broker.JetStream.Tests;

/// <summary>
/// The same raw <c>$JS.API</c> requests sent to our broker and to nats-server 2.9.10: replies are compared as JSON after
/// removing what differs by nature (times, generated names). Fields our broker adds that 2.9.10 lacks are listed per
/// step; every other difference fails the test.
/// </summary>
public class RawApiComparisonTests
{
    // A step: subject, body, optional header lines; replies are compared unless "skip".
    private sealed record Step(string Subject, string Body = "", string? Headers = null, string[]? OursOnly = null);

    private static readonly string[] VolatileFields = ["created", "first_ts", "last_ts", "time", "last_active", "ts"];

    public static TheoryData<string> Scenarios => new() { "streams", "stream-errors", "messages", "consumers", "consumer-errors", "kv-style", "pull", "unknown-fields", "republish" };

    private static List<Step> Script(string scenario) => scenario switch
    {
        "streams" =>
        [
            new("$JS.API.INFO"),
            new("$JS.API.STREAM.CREATE.ORDERS", """{"name":"ORDERS","subjects":["orders.*"],"storage":"memory"}"""),
            new("$JS.API.STREAM.CREATE.ORDERS", """{"name":"ORDERS","subjects":["orders.*"],"storage":"memory"}"""),
            new("$JS.API.STREAM.INFO.ORDERS"),
            new("orders.new", "hello"),
            new("orders.new", "hello", "Nats-Msg-Id: abc"),
            new("orders.new", "hello", "Nats-Msg-Id: abc"),
            new("orders.new", "hello", "Nats-Expected-Last-Sequence: 5"),
            new("orders.new", "hello", "Nats-Expected-Stream: OTHER"),
            new("orders.x", "hello", "Nats-Expected-Last-Subject-Sequence: 9"),
            new("$JS.API.STREAM.NAMES"),
            new("$JS.API.STREAM.NAMES", """{"subject":"orders.x"}"""),
            new("$JS.API.STREAM.NAMES", """{"subject":"nothing"}"""),
            new("$JS.API.STREAM.LIST"),
            new("$JS.API.STREAM.INFO.ORDERS", """{"subjects_filter":">"}"""),
            new("$JS.API.STREAM.UPDATE.ORDERS", """{"name":"ORDERS","subjects":["orders.*","more"],"storage":"memory","max_msgs":100}"""),
            new("$JS.API.STREAM.UPDATE.ORDERS", """{"name":"ORDERS","subjects":["orders.*"],"storage":"memory","retention":"interest"}"""),
            new("$JS.API.STREAM.PURGE.ORDERS", """{"filter":"orders.x"}"""),
            new("$JS.API.STREAM.PURGE.ORDERS"),
            new("$JS.API.STREAM.DELETE.ORDERS"),
            new("$JS.API.STREAM.INFO.ORDERS"),
            new("$JS.API.INFO"),
        ],
        "stream-errors" =>
        [
            new("$JS.API.STREAM.CREATE.X", "{bad json"),
            new("$JS.API.STREAM.CREATE.X", """{"name":"Y","storage":"memory"}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","sealed":true}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","max_age":1000}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","deny_purge":true,"allow_rollup_hdrs":true}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","num_replicas":3}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","subjects":["a","a"]}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","subjects":["$JS.API.FOO"]}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","subjects":["a.>","a.b"]}"""),
            new("$JS.API.STREAM.CREATE.X", """{"name":"X","storage":"memory","discard_new_per_subject":true}"""),
            new("$JS.API.STREAM.CREATE.A", """{"name":"A","storage":"memory","subjects":["a.>"]}"""),
            new("$JS.API.STREAM.CREATE.B", """{"name":"B","storage":"memory","subjects":["a.b"]}"""),
            new("$JS.API.STREAM.CREATE.A", """{"name":"A","storage":"memory","subjects":["a.b.>"]}"""),
            new("$JS.API.STREAM.UPDATE.A", """{"name":"A","storage":"memory","subjects":["a.>"],"max_consumers":5}"""),
            new("$JS.API.STREAM.UPDATE.NOPE", """{"name":"NOPE","storage":"memory"}"""),
            new("$JS.API.STREAM.DELETE.A", """{"x":1}"""),
            new("$JS.API.STREAM.DELETE.NOPE"),
            new("$JS.API.STREAM.PURGE.A", """{"seq":5,"keep":1}"""),
            new("$JS.API.STREAM.PURGE.NOPE"),
            new("$JS.API.STREAM.INFO.NOPE"),
            new("$JS.API.STREAM.INFO.A", "{bad"),
        ],
        "messages" =>
        [
            new("$JS.API.STREAM.CREATE.M", """{"name":"M","subjects":["m.>"],"storage":"memory"}"""),
            new("m.a", "one", "X-Test: 1"),
            new("m.b", "two"),
            new("m.a", "three"),
            new("$JS.API.STREAM.MSG.GET.M", """{"seq":1}"""),
            new("$JS.API.STREAM.MSG.GET.M", """{"seq":2}"""),
            new("$JS.API.STREAM.MSG.GET.M", """{"last_by_subj":"m.a"}"""),
            new("$JS.API.STREAM.MSG.GET.M", """{"seq":1,"next_by_subj":"m.b"}"""),
            new("$JS.API.STREAM.MSG.GET.M", """{"seq":99}"""),
            new("$JS.API.STREAM.MSG.GET.M", ""),
            new("$JS.API.STREAM.MSG.GET.M", """{"seq":1,"last_by_subj":"m.a"}"""),
            new("$JS.API.STREAM.MSG.GET.M", "{nope"),
            new("$JS.API.STREAM.MSG.GET.NOPE", """{"seq":1}"""),
            new("$JS.API.STREAM.MSG.DELETE.M", """{"seq":2}"""),
            new("$JS.API.STREAM.MSG.DELETE.M", """{"seq":2}"""),
            new("$JS.API.STREAM.MSG.DELETE.M", """{"seq":1,"no_erase":true}"""),
            new("$JS.API.STREAM.MSG.DELETE.M", ""),
            new("$JS.API.STREAM.INFO.M", """{"deleted_details":true}"""),
        ],
        "consumers" =>
        [
            new("$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}"""),
            new("s.a", "1"),
            new("s.b", "2"),
            new("$JS.API.CONSUMER.CREATE.S.C2", """{"stream_name":"S","config":{"name":"C2","ack_policy":"explicit","deliver_policy":"all"}}"""),
            new("$JS.API.CONSUMER.DURABLE.CREATE.S.C3", """{"stream_name":"S","config":{"durable_name":"C3","ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.DURABLE.CREATE.S.C3", """{"stream_name":"S","config":{"durable_name":"C3","ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.F.s.a", """{"stream_name":"S","config":{"durable_name":"F","ack_policy":"explicit","filter_subject":"s.a"}}"""),
            new("$JS.API.CONSUMER.INFO.S.C3"),
            new("$JS.API.CONSUMER.NAMES.S"),
            new("$JS.API.CONSUMER.LIST.S"),
            new("$JS.API.CONSUMER.DELETE.S.C2"),
            new("$JS.API.CONSUMER.NAMES.S", """{"offset":1}"""),
            new("$JS.API.STREAM.INFO.S"),
        ],
        "consumer-errors" =>
        [
            new("$JS.API.STREAM.CREATE.S", """{"name":"S","subjects":["s.>"],"storage":"memory"}"""),
            new("$JS.API.STREAM.CREATE.WQ", """{"name":"WQ","subjects":["wq"],"storage":"memory","retention":"workqueue"}"""),
            new("$JS.API.CONSUMER.CREATE.S", """{"stream_name":"S","config":{"durable_name":"C1","ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.CREATE.S", "{bad"),
            new("$JS.API.CONSUMER.CREATE.S", """{"stream_name":"T","config":{"ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.CREATE.NOPE", """{"stream_name":"NOPE","config":{"ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.DURABLE.CREATE.S.D", """{"stream_name":"S","config":{"ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.DURABLE.CREATE.S.D", """{"stream_name":"S","config":{"durable_name":"E","ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.N.s.a", """{"stream_name":"S","config":{"name":"N","ack_policy":"explicit","filter_subject":"s.b"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","filter_subject":"other"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"none","deliver_subject":"d.*"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"none","deliver_subject":"s.x"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"none","deliver_subject":"d","idle_heartbeat":1000}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"none","deliver_subject":"d","flow_control":true}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","idle_heartbeat":1000000000}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","deliver_policy":"by_start_sequence"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","deliver_policy":"all","opt_start_seq":4}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","deliver_policy":"last_per_subject"}}"""),
            new("$JS.API.CONSUMER.CREATE.S.P", """{"stream_name":"S","config":{"name":"P","ack_policy":"explicit","max_deliver":2,"backoff":[1000000000,2000000000]}}"""),
            new("$JS.API.CONSUMER.CREATE.WQ.W", """{"stream_name":"WQ","config":{"name":"W","ack_policy":"all"}}"""),
            new("$JS.API.CONSUMER.CREATE.WQ.W", """{"stream_name":"WQ","config":{"name":"W","ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.CREATE.WQ.W2", """{"stream_name":"WQ","config":{"name":"W2","ack_policy":"explicit"}}"""),
            new("$JS.API.CONSUMER.INFO.S.NOPE"),
            new("$JS.API.CONSUMER.INFO.NOPE.X"),
            new("$JS.API.CONSUMER.DELETE.S.NOPE"),
            new("$JS.API.CONSUMER.NAMES.NOPE"),
        ],
        "kv-style" =>
        [
            new("$JS.API.STREAM.CREATE.KV_b", """{"name":"KV_b","subjects":["$KV.b.>"],"storage":"memory","max_msgs_per_subject":1,"allow_rollup_hdrs":true,"deny_delete":true,"allow_direct":true,"discard":"new"}"""),
            new("$KV.b.k1", "v1", "KV-Operation: PUT"),
            new("$KV.b.k2", "v2"),
            new("$KV.b.k2", "v3", "Nats-Expected-Last-Subject-Sequence: 0"),
            new("$KV.b.k3", "v4", "Nats-Expected-Last-Subject-Sequence: 0"),
            new("$JS.API.DIRECT.GET.KV_b.$KV.b.k1"),
            new("$JS.API.DIRECT.GET.KV_b", """{"last_by_subj":"$KV.b.k2"}"""),
            new("$JS.API.DIRECT.GET.KV_b", """{"seq":77}"""),
            new("$JS.API.DIRECT.GET.KV_b"),
            new("$JS.API.DIRECT.GET.KV_b", "{no"),
            new("$JS.API.STREAM.MSG.DELETE.KV_b", """{"seq":1}"""),
            new("$JS.API.STREAM.PURGE.KV_b", """{"filter":"$KV.b.k1"}"""),
            new("$JS.API.STREAM.INFO.KV_b", """{"subjects_filter":">"}"""),
            new("$JS.API.STREAM.UPDATE.KV_b", """{"name":"KV_b","subjects":["$KV.b.>"],"storage":"file","max_msgs_per_subject":1}"""),
        ],
        "pull" =>
        [
            new("$JS.API.STREAM.CREATE.P", """{"name":"P","subjects":["p.>"],"storage":"memory"}"""),
            new("p.a", "1"),
            new("p.b", "2"),
            new("$JS.API.CONSUMER.DURABLE.CREATE.P.D", """{"stream_name":"P","config":{"durable_name":"D","ack_policy":"explicit","max_batch":10}}"""),
            new("$JS.API.CONSUMER.MSG.NEXT.P.D", """{"batch":1}"""),
            new("$JS.API.CONSUMER.MSG.NEXT.P.D", """{"batch":1,"no_wait":true}"""),
            new("$JS.API.CONSUMER.MSG.NEXT.P.D", """{"batch":1,"no_wait":true}"""),
            new("$JS.API.CONSUMER.MSG.NEXT.P.D", """{"batch":3,"expires":200000000}"""),
            new("$JS.API.CONSUMER.MSG.NEXT.P.D", """{"batch":20}"""),
            new("$JS.API.CONSUMER.MSG.NEXT.P.D", """{"batch":1,"expires":1000000000,"idle_heartbeat":900000000}"""),
            new("$JS.API.CONSUMER.DURABLE.CREATE.P.PUSH", """{"stream_name":"P","config":{"durable_name":"PUSH","ack_policy":"explicit","deliver_subject":"push.here"}}"""),
            new("$JS.API.CONSUMER.MSG.NEXT.P.PUSH", "1"),
            new("$JS.API.CONSUMER.INFO.P.D"),
        ],
        // nats-server 2.9.10 (Go's encoding/json) ignores fields it does not know, in the request and in its config.
        "unknown-fields" =>
        [
            new("$JS.API.STREAM.CREATE.U", """{"name":"U","subjects":["u.>"],"storage":"memory","no_such_field":true,"nested":{"x":[1,2]}}"""),
            new("$JS.API.STREAM.UPDATE.U", """{"name":"U","subjects":["u.>"],"storage":"memory","max_msgs":5,"no_such_field":"x"}"""),
            new("$JS.API.STREAM.CREATE.U", """{"name":"U","subjects":["u.>"],"storage":"memory","max_msgs":5,"other":1}"""),
            new("$JS.API.CONSUMER.CREATE.U.C", """{"stream_name":"U","config":{"name":"C","ack_policy":"explicit","bogus":5},"outer_bogus":1}"""),
            new("$JS.API.CONSUMER.CREATE.U.R", """{"stream_name":"U","config":{"name":"R","ack_policy":"explicit","rate_limit_bps":1000}}"""),
            new("$JS.API.CONSUMER.CREATE.U.O", """{"stream_name":"U","config":{"name":"O","ack_policy":"explicit","replay_policy":"original"}}"""),
            new("$JS.API.CONSUMER.CREATE.U.O", """{"stream_name":"U","config":{"name":"O","ack_policy":"explicit","replay_policy":"instant"}}"""),
            new("$JS.API.CONSUMER.CREATE.U.Q", """{"stream_name":"U","config":{"name":"Q","ack_policy":"none","deliver_subject":"q.out","rate_limit_bps":8000}}"""),
            new("$JS.API.CONSUMER.INFO.U.C"),
            new("$JS.API.STREAM.INFO.U"),
        ],
        "republish" =>
        [
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":"x.>","dest":"y.>"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":"r.*","dest":"r.x.>"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"dest":"*.x"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":"r.*","dest":"y"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":"r.>","dest":"y.*"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":"r.>"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":"r.*","dest":"y.$2"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":"r.*","dest":"y.{{nope(1)}}"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"dest":"y.>"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"src":">","dest":"y.>"}}"""),
            new("$JS.API.STREAM.CREATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"dest":"y.>","headers_only":true}}"""),
            new("$JS.API.STREAM.INFO.R"),
            new("r.a", "hello"),
            new("$JS.API.STREAM.UPDATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"dest":"y.>","headers_only":true}}"""),
            new("$JS.API.STREAM.UPDATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory","republish":{"dest":"y.>"}}"""),
            new("$JS.API.STREAM.UPDATE.R", """{"name":"R","subjects":["r.>"],"storage":"memory"}"""),
            new("$JS.API.STREAM.UPDATE.R", """{"name":"R","subjects":["r.>","y.q"],"storage":"memory","republish":{"dest":"y.>","headers_only":true}}"""),
            new("$JS.API.STREAM.CREATE.N", """{"name":"N","storage":"memory","republish":{"src":"N","dest":"n.copy"}}"""),
            new("$JS.API.STREAM.CREATE.T", """{"name":"T","subjects":["t.*.*"],"storage":"memory","republish":{"src":"t.*.*","dest":"tt.{{wildcard(2)}}.{{partition(3,1)}}.$1"}}"""),
            new("$JS.API.STREAM.LIST"),
        ],
        _ => throw new ArgumentOutOfRangeException(nameof(scenario)),
    };

    [Theory(Timeout = 60_000)]
    [MemberData(nameof(Scenarios))]
    public async Task Replies_match_nats_server(string scenario)
    {
        var steps = Script(scenario);
        var reference = await RunAsync(ServerKind.Reference, steps);
        var ours = await RunAsync(ServerKind.Ours, steps);
        var problems = new List<string>();
        for (var i = 0; i < steps.Count; i++)
        {
            var expected = reference[i];
            var actual = ours[i];
            if (expected != actual)
            {
                problems.Add($"step {i} {steps[i].Subject} {steps[i].Body}{Environment.NewLine}  nats-server: {expected}{Environment.NewLine}  ours:        {actual}");
            }
        }

        Assert.True(problems.Count == 0, string.Join(Environment.NewLine, problems));
        Assert.Contains(ours, reply => reply != "(no reply)");
    }

    private static async Task<List<string>> RunAsync(ServerKind kind, List<Step> steps)
    {
        await using var server = await JetStreamServer.StartAsync(kind);
        await using var connection = server.Connect();
        await connection.ConnectAsync();
        var replies = new List<string>();
        foreach (var step in steps)
        {
            NatsHeaders? headers = null;
            if (step.Headers is not null)
            {
                headers = [];
                foreach (var line in step.Headers.Split('|'))
                {
                    var colon = line.IndexOf(':', StringComparison.Ordinal);
                    headers[line[..colon]] = line[(colon + 1)..].Trim();
                }
            }

            // A fresh inbox per step: JetStream deliveries carry the stored subject, not the inbox, so the client's
            // request multiplexer cannot be used.
            var inbox = $"cmp.{replies.Count}";
            await using var subscription = await connection.SubscribeCoreAsync<byte[]>(inbox);
            await connection.PingAsync();
            await connection.PublishAsync(step.Subject, Encoding.UTF8.GetBytes(step.Body), headers, replyTo: inbox);
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(step.Subject.Contains("MSG.NEXT", StringComparison.Ordinal) ? 1 : 2));
            try
            {
                var reply = await subscription.Msgs.ReadAsync(timeout.Token);
                replies.Add(Normalize(reply, step.OursOnly));
            }
            catch (OperationCanceledException)
            {
                replies.Add("(no reply)");
            }
        }

        return replies;
    }

    private static string Normalize(NatsMsg<byte[]> reply, string[]? oursOnly)
    {
        var subject = reply.Subject.StartsWith("cmp.", StringComparison.Ordinal) ? "" : $"subject {reply.Subject} ";
        var status = subject + (reply.Headers is { Code: > 0 } h ? $"status {h.Code} {h.MessageText} " : "");
        var headerText = reply.Headers is null ? "" : string.Join(";", reply.Headers.Where(p => p.Key != "Nats-Time-Stamp").OrderBy(p => p.Key, StringComparer.Ordinal).Select(p => $"{p.Key}={p.Value}"));
        var data = reply.Data ?? [];
        if (data.Length == 0 || data[0] != '{')
        {
            return status + headerText + " " + Encoding.UTF8.GetString(data);
        }

        var node = JsonNode.Parse(data)!;
        Scrub(node, oursOnly ?? []);
        return status + headerText + " " + node.ToJsonString();
    }

    private static void Scrub(JsonNode node, string[] oursOnly)
    {
        switch (node)
        {
            case JsonObject obj:
                foreach (var field in VolatileFields.Concat(oursOnly))
                {
                    if (obj.ContainsKey(field))
                    {
                        obj[field] = "*";
                    }
                }

                // The account info's "api" block: 2.11 added "level", the API level served (nats-server 2.11's
                // JetStreamAPIStats), which we report (1) and 2.9.10 lacks; SubjectDeleteMarkerTests checks its value.
                if (obj.ContainsKey("level") && obj.ContainsKey("total") && obj.ContainsKey("errors"))
                {
                    obj.Remove("level");
                }

                // Generated consumer names; 2.9.10 omits the generated name from an ephemeral's config.
                if (obj["name"] is JsonValue name && name.TryGetValue<string>(out var text) && text.Length == 8 && obj.ContainsKey("stream_name"))
                {
                    obj["name"] = "*";
                    if (obj["config"] is JsonObject config && config["durable_name"] is null)
                    {
                        config.Remove("name");
                    }
                }

                var ordered = obj.OrderBy(p => p.Key, StringComparer.Ordinal).ToList();
                obj.Clear();
                foreach (var (key, value) in ordered)
                {
                    obj[key] = value;
                    if (value is not null)
                    {
                        Scrub(value, oursOnly);
                    }
                }

                break;
            case JsonArray array:
                foreach (var item in array)
                {
                    if (item is not null)
                    {
                        Scrub(item, oursOnly);
                    }
                }

                break;
        }
    }
}
