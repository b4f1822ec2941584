// JetStreamClient: the adapter's client of the JetStream JSON API ($JS.API.*, or $JS.<domain>.API.* with js_domain: Prefix)
// over one in-process bus client, as nats-server's MQTT reaches JetStream. Every call has a timeout (RequestTimeout,
// js_api_timeout) and throws JetStreamApiException (Subject, Code, ErrorCode, Description) when the server answers with
// an error, nothing answers or the answer is late.
// Stream names and subjects of the adapter: MqttStreams. One instance per broker account with MQTT clients, bound to
// that account: MqttAccount.JetStream.Api (MqttJetStream; null when JetStream is not enabled or its setup failed), ready
// once MqttAccount.Ready is.
//
//   Task<bool>                IsAvailableAsync(ct)                          $JS.API.INFO answers (no responders: false)
//   Task<AccountLimitsModel>  AccountLimitsAsync(ct)                        $JS.API.INFO limits (max_memory, max_storage)
//   Task                      EnsureStreamAsync(StreamSpec, ct)             create, or update what differs (storage: at creation)
//   Task<ulong>               PublishAsync(subject, headers, payload, ct)   waits for the PubAck; returns the stream sequence
//   Task<FetchedMessage?>     GetLastBySubjectAsync(stream, subject, ct)    STREAM.MSG.GET last_by_subj; null when none (10037)
//   Task<FetchedMessage?>     GetBySequenceAsync(stream, seq, ct)           STREAM.MSG.GET seq; null when none (10037)
//   Task<List<FetchedMessage>> ReadAllAsync(stream, filter?, ct)            every message (matching filter), by sequence (bulk)
//   Task<HashSet<string>>     ListSubjectsAsync(stream, filter, ct)         the subjects holding messages (STREAM.INFO, paged)
//   Task                      PurgeSubjectAsync(stream, subject, ct)        STREAM.PURGE with filter
//   Task<bool>                DeleteMessageAsync(stream, seq, ct)           STREAM.MSG.DELETE, no_erase; false when not held (10043)
//   Task                      CreateConsumerAsync(stream, ConsumerSpec, ct) durable push consumer, explicit acks
//   Task                      DeleteConsumerAsync(stream, name, ct)         no error when it does not exist
using System.Globalization;
using System.Text;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;
using Broker.Abstractions;

namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>
/// A client of the JetStream JSON API over one bus client: the standard <c>$JS.API.*</c> requests nats-server's MQTT
/// implementation makes, so the adapter depends on the contract only, never on the engine's types.
/// </summary>
internal sealed partial class JetStreamClient : IAsyncDisposable
{
    /// <summary>nats-server's MQTT waits this long for JetStream API answers (<c>mqttJSAPITimeout</c>, 4s).</summary>
    public static readonly TimeSpan DefaultTimeout = TimeSpan.FromSeconds(4);

    private readonly IBusClient client;
    private readonly bool ownsClient;
    private string? noAnswer;

    /// <param name="client">The bus client the requests go through.</param>
    /// <param name="timeout">How long each request waits for its answer; default <see cref="DefaultTimeout"/>.</param>
    /// <param name="ownsClient">Whether disposing the API disposes the client.</param>
    /// <param name="domain">
    /// The JetStream domain to talk to (<c>js_domain</c>): requests go to <c>$JS.&lt;domain&gt;.API.</c>; default none,
    /// <c>$JS.API.</c>.
    /// </param>
    public JetStreamClient(IBusClient client, TimeSpan? timeout = null, bool ownsClient = false, string? domain = null)
    {
        ArgumentNullException.ThrowIfNull(client);
        this.client = client;
        this.ownsClient = ownsClient;
        RequestTimeout = timeout ?? DefaultTimeout;
        Prefix = string.IsNullOrEmpty(domain) ? "$JS.API." : "$JS." + domain + ".API.";
    }

    /// <summary>How long each request waits for its answer.</summary>
    public TimeSpan RequestTimeout { get; }

    /// <summary>
    /// Why a request failed when it got no answer in time; formatted once, not per timeout: a leave of 10,000 QoS 1
    /// sessions times most of their consumer deletes out, and formatting it each time compiled the runtime's
    /// floating-point formatting at tier 1 during the leave (issue 25).
    /// </summary>
    public string NoAnswer => noAnswer ??= $"no answer within {RequestTimeout.TotalSeconds:0.###}s";

    /// <summary>The subject prefix of the requests: <c>$JS.API.</c>, or <c>$JS.&lt;domain&gt;.API.</c> with a domain.</summary>
    public string Prefix { get; }

    public ValueTask DisposeAsync() => ownsClient ? client.DisposeAsync() : ValueTask.CompletedTask;

    /// <summary>
    /// Whether JetStream answers <c>$JS.API.INFO</c> with account info (false when nothing subscribes it, or JetStream
    /// is not enabled on the server).
    /// </summary>
    /// <exception cref="JetStreamApiException">JetStream runs and says it is not enabled for the client's account (10039), as it does for <c>$G</c> once accounts are configured: a definite answer.</exception>
    public async Task<bool> IsAvailableAsync(CancellationToken cancellationToken)
    {
        try
        {
            await RequestAsync(Prefix + "INFO", default, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (JetStreamApiException ex) when (ex.ErrorCode == 0 && ex.Code == 503 || ex.ErrorCode is 10076)
        {
            // No responders, or "JetStream not enabled".
            return false;
        }
    }

    /// <summary>The account's storage limits from <c>$JS.API.INFO</c> (-1: unlimited, 0: that storage is not available).</summary>
    public async Task<AccountLimitsModel> AccountLimitsAsync(CancellationToken cancellationToken)
    {
        var response = await RequestAsync(Prefix + "INFO", default, cancellationToken).ConfigureAwait(false);
        return response.Limits ?? new AccountLimitsModel();
    }

    /// <summary>Publishes to a stream's subject as a request and waits for the PubAck.</summary>
    /// <returns>The message's stream sequence.</returns>
    /// <exception cref="JetStreamApiException">No stream takes the subject, or the stream refused the message.</exception>
    public async Task<ulong> PublishAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> payload, CancellationToken cancellationToken)
    {
        var response = await RequestAsync(subject, headers, payload, cancellationToken).ConfigureAwait(false);
        return response.Stream is null
            ? throw new JetStreamApiException(subject, 500, 0, "the answer is not a PubAck")
            : response.Sequence;
    }

    /// <summary>The last message of <paramref name="subject"/> in a stream, or <see langword="null"/> when there is none.</summary>
    public async Task<FetchedMessage?> GetLastBySubjectAsync(string stream, string subject, CancellationToken cancellationToken)
    {
        var request = new MessageGetRequest { LastBySubject = subject };
        return await GetMessageAsync(stream, request, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>The message at <paramref name="sequence"/> in a stream, or <see langword="null"/> when there is none.</summary>
    public Task<FetchedMessage?> GetBySequenceAsync(string stream, ulong sequence, CancellationToken cancellationToken)
        => GetMessageAsync(stream, new MessageGetRequest { Sequence = sequence }, cancellationToken);

    /// <summary>Removes every message of one subject from a stream.</summary>
    public async Task PurgeSubjectAsync(string stream, string subject, CancellationToken cancellationToken)
    {
        var body = JsonSerializer.SerializeToUtf8Bytes(new PurgeRequest { Filter = subject }, MqttJsonContext.Default.PurgeRequest);
        await RequestAsync(Prefix + "STREAM.PURGE." + stream, body, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>
    /// Removes one message by its sequence without erasing its bytes; <see langword="false"/> when the stream does not
    /// hold it. Cheaper than <see cref="PurgeSubjectAsync"/>, which looks through the stream for the subject.
    /// </summary>
    public async Task<bool> DeleteMessageAsync(string stream, ulong sequence, CancellationToken cancellationToken)
    {
        var body = Encoding.UTF8.GetBytes("{\"seq\":" + sequence.ToString(CultureInfo.InvariantCulture) + ",\"no_erase\":true}");
        try
        {
            await RequestAsync(Prefix + "STREAM.MSG.DELETE." + stream, body, cancellationToken).ConfigureAwait(false);
            return true;
        }
        catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.SequenceNotFound)
        {
            return false;
        }
    }

    private async Task<FetchedMessage?> GetMessageAsync(string stream, MessageGetRequest request, CancellationToken cancellationToken)
    {
        var body = JsonSerializer.SerializeToUtf8Bytes(request, MqttJsonContext.Default.MessageGetRequest);
        ApiResponseModel response;
        try
        {
            response = await RequestAsync(Prefix + "STREAM.MSG.GET." + stream, body, cancellationToken).ConfigureAwait(false);
        }
        catch (JetStreamApiException ex) when (ex.ErrorCode == JetStreamApiException.NoMessageFound)
        {
            return null;
        }

        var message = response.Message ?? throw new JetStreamApiException(Prefix + "STREAM.MSG.GET." + stream, 500, 0, "the answer carries no message");
        return new FetchedMessage(message.Subject, message.Sequence, message.Headers ?? [], message.Data ?? []);
    }

    private Task<ApiResponseModel> RequestAsync(string subject, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
        => RequestAsync(subject, default, body, cancellationToken);

    /// <summary>
    /// Sends a request and returns its answer, or throws with the API error it carries. One async method per request
    /// (<see cref="AnswerAsync"/>): each layer more was a state machine allocated per request and, at the first burst of
    /// MQTT QoS 1 subscriptions, ~8 more methods the runtime recompiled at tier 1 (issue 25).
    /// </summary>
    private Task<ApiResponseModel> RequestAsync(string subject, ReadOnlyMemory<byte> headers, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
        => AnswerAsync(subject, client.RequestAsync(subject, headers, body, RequestTimeout, cancellationToken));

    /// <summary>Sends a request and returns its raw answer, or throws with the API error it carries.</summary>
    private async Task<ReadOnlyMemory<byte>> RequestRawAsync(string subject, ReadOnlyMemory<byte> body, CancellationToken cancellationToken)
    {
        var request = client.RequestAsync(subject, default, body, RequestTimeout, cancellationToken);
        await AnswerAsync(subject, request).ConfigureAwait(false);

        // Completed with its reply once AnswerAsync returned.
        return (await request.ConfigureAwait(false)).Payload;
    }

    /// <summary>The answer to a request sent on <paramref name="subject"/>, or the API error it carries, thrown.</summary>
    private async Task<ApiResponseModel> AnswerAsync(string subject, Task<BusReply> request)
    {
        BusReply reply;
        try
        {
            reply = await request.ConfigureAwait(false);
        }
        catch (NoRespondersException ex)
        {
            throw new JetStreamApiException(subject, 503, 0, "no responders (JetStream is not running, or no stream takes the subject)", ex);
        }
        catch (TimeoutException ex)
        {
            throw new JetStreamApiException(subject, 408, 0, NoAnswer, ex);
        }

        var response = Parse(subject, reply.Payload, MqttJsonContext.Default.ApiResponseModel);
        if (response.Error is { } error)
        {
            throw new JetStreamApiException(subject, error.Code, error.ErrorCode, error.Description ?? "");
        }

        return response;
    }

    private static T Parse<T>(string subject, ReadOnlyMemory<byte> payload, JsonTypeInfo<T> typeInfo)
    {
        try
        {
            return JsonSerializer.Deserialize(payload.Span, typeInfo) ?? throw new JetStreamApiException(subject, 500, 0, "empty answer");
        }
        catch (JsonException ex)
        {
            throw new JetStreamApiException(subject, 500, 0, "the answer is not valid JSON: " + ex.Message, ex);
        }
    }
}
