using System.Buffers;
using System.Text;
using System.Text.Json;
using Broker.Abstractions;

namespace Broker.JetStream.Internal.Events;

/// <summary>
/// The advisories of one account's JetStream that are not a consumer's acknowledgements (those are
/// <see cref="Consumers.ConsumerEvents"/>): a stream created, updated or deleted
/// (<c>$JS.EVENT.ADVISORY.STREAM.CREATED|UPDATED|DELETED.&lt;stream&gt;</c>, <c>stream_action</c>), a consumer created or
/// deleted (<c>$JS.EVENT.ADVISORY.CONSUMER.CREATED|DELETED.&lt;stream&gt;.&lt;consumer&gt;</c>, <c>consumer_action</c>),
/// and the audit of every API response (<c>$JS.EVENT.ADVISORY.API</c>, <c>api_audit</c>). Published in the account,
/// through its API client (nats-server sends them from the account's stream and internal clients), and only when the
/// account has a subscriber on the subject: nothing is built otherwise.
/// </summary>
internal sealed partial class JetStreamAdvisories(string account, ISubjectInterest? interest, string? domain, ServerIdentity? server, Action<byte[], byte[]> publish)
{
    private const string Prefix = "$JS.EVENT.ADVISORY.";
    private static readonly byte[] AuditSubject = Encoding.UTF8.GetBytes(Prefix + "API");

    /// <summary><c>STREAM.CREATED</c> (<c>create</c>), <c>STREAM.UPDATED</c> (<c>modify</c>) or <c>STREAM.DELETED</c> (<c>delete</c>).</summary>
    public void StreamAction(string stream, StreamActionKind kind) => Advise(stream, null, kind);

    /// <summary><c>CONSUMER.CREATED</c> (<c>create</c>) or <c>CONSUMER.DELETED</c> (<c>delete</c>).</summary>
    public void ConsumerAction(string stream, string consumer, StreamActionKind kind) => Advise(stream, consumer, kind);

    /// <summary>
    /// The audit of one API response (nats-server <c>sendJetStreamAPIAuditAdvisory</c>): the server's name, the
    /// requester (<c>client</c>: the request's <c>Nats-Request-Info</c> when it came through an import, else the account
    /// and this server), the subject, the request's payload (left out when empty) and the response, as strings.
    /// </summary>
    public void ApiAudit(ApiRequest request, byte[] response)
    {
        if (!Listened(AuditSubject))
        {
            return;
        }

        var buffer = new ArrayBufferWriter<byte>(512 + request.Payload.Length + response.Length);
        var writer = AdvisoryJson.Begin(buffer, "io.nats.jetstream.advisory.v1.api_audit");
        writer.WriteString("server", server?.ServerName ?? "");
        writer.WritePropertyName("client");
        WriteClient(writer, request.Headers);
        writer.WriteString("subject", request.Subject);
        if (request.Payload.Length > 0)
        {
            // As Go's string(msg): bytes that are not UTF-8 become U+FFFD.
            writer.WriteString("request", Encoding.UTF8.GetString(request.Payload));
        }

        writer.WriteString("response", response);
        publish(AuditSubject, AdvisoryJson.End(writer, buffer, domain));
    }

    /// <summary>nats-server's <c>JSStreamActionAdvisory</c> (no consumer) or <c>JSConsumerActionAdvisory</c>.</summary>
    private void Advise(string stream, string? consumer, StreamActionKind kind)
    {
        var (token, action) = Names(kind);
        var subject = Encoding.UTF8.GetBytes(consumer is null
            ? Prefix + "STREAM." + token + "." + stream
            : Prefix + "CONSUMER." + token + "." + stream + "." + consumer);
        if (!Listened(subject))
        {
            return;
        }

        var buffer = new ArrayBufferWriter<byte>(256);
        var writer = AdvisoryJson.Begin(buffer, consumer is null ? "io.nats.jetstream.advisory.v1.stream_action" : "io.nats.jetstream.advisory.v1.consumer_action");
        writer.WriteString("stream", stream);
        if (consumer is not null)
        {
            writer.WriteString("consumer", consumer);
        }

        writer.WriteString("action", action);
        publish(subject, AdvisoryJson.End(writer, buffer, domain));
    }

    private bool Listened(byte[] subject) => interest?.HasInterest(subject) ?? true;

    private void WriteClient(Utf8JsonWriter writer, byte[] headers)
    {
        if (headers.Length > 0 && NatsHeaderBlock.TryGetValue(headers, "Nats-Request-Info"u8, out var info))
        {
            try
            {
                using var document = JsonDocument.Parse(info.ToArray());
                if (document.RootElement.ValueKind == JsonValueKind.Object)
                {
                    document.RootElement.WriteTo(writer);
                    return;
                }
            }
            catch (JsonException)
            {
                // A header that is not nats-server's ClientInfo: the requester is written as for a direct request.
            }
        }

        writer.WriteStartObject();
        writer.WriteString("acc", account);
        if (server is not null)
        {
            writer.WriteString("server", server.ServerId);
        }

        writer.WriteEndObject();
    }

    private static (string Token, string Action) Names(StreamActionKind kind) => kind switch
    {
        StreamActionKind.Create => ("CREATED", "create"),
        StreamActionKind.Modify => ("UPDATED", "modify"),
        _ => ("DELETED", "delete"),
    };
}

/// <summary>nats-server's <c>ActionAdvisoryType</c>.</summary>
internal enum StreamActionKind
{
    Create,
    Modify,
    Delete,
}
