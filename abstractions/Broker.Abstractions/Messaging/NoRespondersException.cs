namespace Broker.Abstractions;

/// <summary>Thrown by <see cref="IBusClient.RequestAsync"/> when no subscription matched the request subject.</summary>
public sealed class NoRespondersException : Exception
{
    /// <summary>Creates the exception.</summary>
    public NoRespondersException()
        : base("No responders are available for the request.")
    {
    }

    /// <summary>Creates the exception with a message.</summary>
    /// <param name="message">The message.</param>
    public NoRespondersException(string message)
        : base(message)
    {
    }

    /// <summary>Creates the exception with a message and an inner exception.</summary>
    /// <param name="message">The message.</param>
    /// <param name="innerException">The cause.</param>
    public NoRespondersException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
