using System.Buffers;
using System.Text;
using System.Text.Encodings.Web;
using System.Text.Json;
using Broker.Abstractions;

namespace Broker.Core.Internal.Events;

/// <summary>
/// Publishes the system account's messages through its one in-process client: events, and the answers to
/// <c>$SYS.REQ</c> requests in nats-server's envelope (<c>ServerAPIResponse</c>: <c>server</c>, then <c>data</c> or
/// <c>error</c>). JSON is compact, as Go's <c>json.Marshal</c> writes it. Safe from any thread: the client serialises
/// publishes, and each caller brings its own buffer.
/// </summary>
internal sealed class SystemPublisher(IBusClient client, SystemServerInfo server, BrokerCore? core = null)
{
    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping };

    // nats-server's account internal clients, for the few events published in an account (made at its first; kept while the account lives).
    private readonly System.Runtime.CompilerServices.ConditionalWeakTable<Accounts.Account, IBusClient> accountClients = [];

    public SystemServerInfo Server => server;

    /// <summary>
    /// Writes <paramref name="item"/> and publishes it on its subject (and its second one, if it has one): in the system
    /// account, or in the account the event names through that account's own internal client.
    /// </summary>
    public void Publish(SystemEvent item, ArrayBufferWriter<byte> buffer)
    {
        if (item.Account is { } account && core is not null)
        {
            Write(item, buffer);
            Send(accountClients.GetValue(account, a => new Clients.InProcessClient(core, new BusClientOptions { Name = "account events", Echo = false }, a)), item.Subject, buffer);
            return;
        }

        Publish(item.Subject, item, buffer);
        if (item.AlsoSubject is { } also)
        {
            Send(also, buffer);
        }
    }

    /// <summary>Writes <paramref name="item"/> and publishes it on <paramref name="subject"/> (a requester's inbox).</summary>
    public void Publish(string subject, SystemEvent item, ArrayBufferWriter<byte> buffer)
    {
        Write(item, buffer);
        Send(subject, buffer);
    }

    /// <summary>
    /// Answers a request with <c>{"server":{..},"data":&lt;json&gt;}</c>; <paramref name="data"/> is a complete JSON value
    /// (a monitoring page), rewritten compact.
    /// </summary>
    public void Respond(string reply, ReadOnlySpan<byte> data)
    {
        var buffer = new ArrayBufferWriter<byte>(data.Length + 256);
        using (var writer = new Utf8JsonWriter(buffer, WriterOptions))
        {
            writer.WriteStartObject();
            server.Write(writer);
            writer.WritePropertyName("data");
            var reader = new Utf8JsonReader(data);
            using var document = JsonDocument.ParseValue(ref reader);
            document.RootElement.WriteTo(writer);
            writer.WriteEndObject();
        }

        Send(reply, buffer);
    }

    /// <summary>
    /// Answers a request with <c>{"server":{..},"error":{"code":..,"description":..}}</c>; <paramref name="withNullData"/>
    /// adds <c>"data":null</c>, as nats-server writes when the page itself failed (its typed nil).
    /// </summary>
    public void RespondError(string reply, int code, string description, bool withNullData)
    {
        var buffer = new ArrayBufferWriter<byte>(256);
        using (var writer = new Utf8JsonWriter(buffer, WriterOptions))
        {
            writer.WriteStartObject();
            server.Write(writer);
            if (withNullData)
            {
                writer.WriteNull("data");
            }

            writer.WritePropertyName("error");
            writer.WriteStartObject();
            writer.WriteNumber("code", code);
            writer.WriteString("description", description);
            writer.WriteEndObject();
            writer.WriteEndObject();
        }

        Send(reply, buffer);
    }

    private void Write(SystemEvent item, ArrayBufferWriter<byte> buffer)
    {
        buffer.ResetWrittenCount();
        using var writer = new Utf8JsonWriter(buffer, WriterOptions);
        item.Write(writer, server);
    }

    private void Send(string subject, ArrayBufferWriter<byte> buffer) => Send(client, subject, buffer);

    private static void Send(IBusClient via, string subject, ArrayBufferWriter<byte> buffer)
    {
        // The payload is copied: the buffer is reused for the next message while this one may still be queued.
        var payload = new ReadOnlySequence<byte>(buffer.WrittenSpan.ToArray());
        via.Publish(Encoding.UTF8.GetBytes(subject), default, ReadOnlySequence<byte>.Empty, payload);
    }
}
