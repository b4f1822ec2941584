namespace Broker.Adapters.Mqtt.Internal.JetStream;

/// <summary>A JetStream API request failed: the server answered with an error, or nothing answered.</summary>
internal sealed class JetStreamApiException : Exception
{
    /// <summary>nats-server's <c>JSNoMessageFoundErr</c>.</summary>
    public const int NoMessageFound = 10037;

    /// <summary>nats-server's <c>JSSequenceNotFoundErrF</c> (a message delete of a sequence the stream does not hold).</summary>
    public const int SequenceNotFound = 10043;

    /// <summary>nats-server's <c>JSStreamNotFoundErr</c>.</summary>
    public const int StreamNotFound = 10059;

    /// <summary>nats-server's <c>JSStreamNameExistErr</c> (same name, other config).</summary>
    public const int StreamNameExist = 10058;

    /// <summary>nats-server's <c>JSStreamCreateErrF</c> (also: the storage type is not available here).</summary>
    public const int StreamCreate = 10049;

    /// <summary>nats-server's <c>JSNotEnabledForAccountErr</c> ("JetStream not enabled for account").</summary>
    public const int NotEnabledForAccount = 10039;

    /// <summary>nats-server's <c>JSConsumerNotFoundErr</c>.</summary>
    public const int ConsumerNotFound = 10014;

    public JetStreamApiException()
        : this("", 0, 0, "JetStream API request failed")
    {
    }

    public JetStreamApiException(string message)
        : this("", 0, 0, message)
    {
    }

    public JetStreamApiException(string message, Exception innerException)
        : base(message, innerException)
    {
        Subject = "";
        Description = message;
    }

    public JetStreamApiException(string subject, int code, int errorCode, string description, Exception? innerException = null)
        : base($"JetStream API {subject}: {description} (code {code}, err_code {errorCode})", innerException)
    {
        Subject = subject;
        Code = code;
        ErrorCode = errorCode;
        Description = description;
    }

    /// <summary>The API subject of the failed request.</summary>
    public string Subject { get; }

    /// <summary>The HTTP-like code (404, 500, 503, ...); 503 with no error code when nothing answered.</summary>
    public int Code { get; }

    /// <summary>The JetStream error code (10037, ...), or 0.</summary>
    public int ErrorCode { get; }

    /// <summary>The server's description.</summary>
    public string Description { get; }
}
