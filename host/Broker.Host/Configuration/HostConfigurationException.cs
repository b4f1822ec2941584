namespace Broker.Host.Configuration;

/// <summary>
/// A configuration value the host cannot start with. Its message is one line naming the setting, printed as is
/// (no stack trace) before the host exits with code 1.
/// </summary>
internal sealed class HostConfigurationException : Exception
{
    public HostConfigurationException()
    {
    }

    public HostConfigurationException(string message)
        : base(message)
    {
    }

    public HostConfigurationException(string message, Exception innerException)
        : base(message, innerException)
    {
    }
}
