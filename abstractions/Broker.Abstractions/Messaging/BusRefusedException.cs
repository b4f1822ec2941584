namespace Broker.Abstractions;

/// <summary>
/// Thrown when the broker refuses an operation of an <see cref="IBusConnection"/>: the user's permissions forbid the
/// publish or subscription, or it has as many subscriptions as <c>max_subscriptions</c> allows. Its message is the text
/// nats-server sends a NATS client in the <c>-ERR</c> line.
/// </summary>
public sealed class BusRefusedException : Exception
{
    /// <summary>Creates the exception.</summary>
    public BusRefusedException()
        : base("The broker refused the operation.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">The message.</param>
    public BusRefusedException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and an inner exception.</summary>
    /// <param name="message">The message.</param>
    /// <param name="innerException">The cause.</param>
    public BusRefusedException(string message, Exception innerException)
        : base(message, innerException)
    {
    }

    /// <summary>Creates the exception for a refused operation on a subject.</summary>
    /// <param name="reason">What was refused.</param>
    /// <param name="subject">The subject of the operation.</param>
    /// <param name="message">nats-server's error text.</param>
    public BusRefusedException(BusRefusalReason reason, string subject, string message)
        : base(message)
    {
        Reason = reason;
        Subject = subject;
    }

    /// <summary>What was refused.</summary>
    public BusRefusalReason Reason { get; }

    /// <summary>The subject of the refused operation, or <see langword="null"/>.</summary>
    public string? Subject { get; }
}

/// <summary>What <see cref="BusRefusedException"/> refused.</summary>
public enum BusRefusalReason
{
    /// <summary>Not stated.</summary>
    Unspecified,

    /// <summary>The user may not publish to the subject (or with that reply subject): <c>Permissions Violation for Publish to ...</c>.</summary>
    PublishPermission,

    /// <summary>The user may not subscribe to the subject: <c>Permissions Violation for Subscription to ...</c>.</summary>
    SubscribePermission,

    /// <summary>The client has <c>max_subscriptions</c> subscriptions already: <c>maximum subscriptions exceeded</c>.</summary>
    MaxSubscriptions,
}
