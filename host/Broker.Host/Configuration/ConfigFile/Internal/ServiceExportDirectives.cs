using Broker.Core.Auth;
using Broker.Host.Configuration.Conf;
using static Broker.Host.Configuration.ConfigFile.Internal.ConfValueText;

namespace Broker.Host.Configuration.ConfigFile.Internal;

/// <summary>
/// The values of a service export's directives (nats-server opts.go <c>parseExportStreamOrService</c> and
/// <c>parseServiceLatency</c>): <c>response_type</c>, <c>response_threshold</c> and <c>latency</c>, with nats-server's
/// texts; which keys an export may have is <see cref="ImportsMapper"/>'s.
/// </summary>
/// <param name="output">Where diagnostics go.</param>
internal sealed class ServiceExportDirectives(ConfMappingBuilder output)
{
    /// <summary>A <c>response_type</c>: <c>singleton</c> (<c>single</c>), <c>stream</c>, <c>chunked</c> (<c>chunk</c>); null after an error.</summary>
    public ServiceResponseType? ResponseType(ConfEntry entry)
    {
        if (entry.Value is not ConfString text)
        {
            output.Error(entry.KeyPosition, $"Expected response type to be string, got {GoType(entry.Value)}");
            return null;
        }

        switch (text.Value.ToLowerInvariant())
        {
            case "single" or "singleton":
                return ServiceResponseType.Singleton;
            case "stream":
                return ServiceResponseType.Streamed;
            case "chunk" or "chunked":
                return ServiceResponseType.Chunked;
            default:
                output.Error(entry.KeyPosition, $"Unknown response type: {Quote(text.Value)}");
                return null;
        }
    }

    /// <summary>A <c>response_threshold</c>: a Go duration string; null after an error.</summary>
    public TimeSpan? Threshold(ConfEntry entry)
    {
        if (entry.Value is not ConfString text)
        {
            output.Error(entry.KeyPosition, $"Expected response threshold to be a parseable time duration, got {GoType(entry.Value)}");
            return null;
        }

        if (!Broker.Abstractions.ConfigSyntax.TryParseDuration(text.Value, out var value, out _))
        {
            output.Error(entry.KeyPosition, $"Expected response threshold to be a parseable time duration, got {Quote(text.Value)}");
            return null;
        }

        return value;
    }

    /// <summary>
    /// nats-server parseServiceLatency: a results subject (every request sampled), or { sampling: 1-100 | "N%" |
    /// "headers", subject }; null after reporting an error.
    /// </summary>
    public ServiceLatencyOptions? Latency(ConfEntry entry)
    {
        if (entry.Value is ConfString subject)
        {
            return new ServiceLatencyOptions { Subject = subject.Value };
        }

        if (entry.Value is not ConfMap latency)
        {
            output.Error(entry.KeyPosition, $"Expected latency entry to be a map/struct or string, got {GoType(entry.Value)}");
            return null;
        }

        var result = new ServiceLatencyOptions { Subject = "" };
        var hasSubject = false;
        foreach (var field in latency.Entries)
        {
            switch (field.Key)
            {
                case "sampling":
                    if (Sampling(field) is not { } sampling)
                    {
                        return null;
                    }

                    result.Sampling = sampling;
                    break;
                case "subject":
                    if (field.Value is not ConfString text)
                    {
                        output.Error(field.KeyPosition, $"Expected latency subject to be a string, got {GoType(field.Value)}");
                        return null;
                    }

                    result.Subject = text.Value;
                    hasSubject = true;
                    break;
            }
        }

        if (!hasSubject)
        {
            output.Error(entry.KeyPosition, "Latency subject required, but missing");
            return null;
        }

        return result;
    }

    private int? Sampling(ConfEntry field)
    {
        long sample;
        switch (field.Value)
        {
            case ConfInteger number:
                sample = number.Value;
                break;
            case ConfString text when text.Value.Trim().Equals("headers", StringComparison.OrdinalIgnoreCase):
                return ServiceLatencyOptions.HeadersOnly;
            case ConfString text:
                if (!long.TryParse(text.Value.TrimEnd('%'), System.Globalization.NumberStyles.AllowLeadingSign, System.Globalization.CultureInfo.InvariantCulture, out sample))
                {
                    output.Error(field.KeyPosition, $"Failed to parse latency sample: strconv.Atoi: parsing {Quote(text.Value.TrimEnd('%'))}: invalid syntax");
                    return null;
                }

                break;
            default:
                output.Error(field.KeyPosition, $"Expected latency sample to be a string or map/struct, got {GoType(field.Value)}");
                return null;
        }

        if (sample is < 1 or > 100)
        {
            output.Error(field.KeyPosition, "bad sampling percentage, should be 1-100");
            return null;
        }

        return (int)sample;
    }

    private static string Quote(string text) => GoQuoted(new ConfString(text, default));
}
