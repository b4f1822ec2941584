using System.Buffers;
using System.Text;
using Broker.Abstractions;

namespace Broker.Core.Internal.Accounts;

/// <summary>
/// A service export's latency tracking (nats-server's <c>serviceLatency</c>): the sampling rate (1-100, or 0 for
/// requests whose tracing headers ask for it) and the subject the results go to in the exporting account.
/// </summary>
internal sealed class ServiceLatency
{
    public ServiceLatency(int sampling, string results)
    {
        Sampling = sampling;
        Results = results;
    }

    /// <summary>The percentage sampled; 0 samples only requests with tracing headers (nats-server's <c>headers</c>).</summary>
    public int Sampling { get; }

    /// <summary>The results subject in the exporting account.</summary>
    public string Results { get; }

    /// <summary>The sampling as /accountz and account JWTs write it: the number, or <c>headers</c>.</summary>
    public object SamplingText => Sampling == 0 ? "headers" : Sampling;

    /// <summary>
    /// Whether a request is sampled (accounts.go <c>shouldSample</c>): always at 100, at the rate as nats-server draws it
    /// (a number below 100 not above the rate), else when its tracing headers ask for it. No allocation unless sampled
    /// because of its headers; <paramref name="header"/> is then the headers that decided it.
    /// </summary>
    public bool ShouldSample(in ReadOnlySequence<byte> headers, out SortedDictionary<string, List<string>>? header)
    {
        header = null;
        if (Sampling >= 100 || (Sampling > 0 && Random.Shared.Next(100) <= Sampling))
        {
            return true;
        }

        return !headers.IsEmpty && TraceHeaders.ShouldSample(headers, out header);
    }

    /// <summary>
    /// The load-time check of a tracked export (<c>TrackServiceExportWithSampling</c>): a cause, or null when it may be
    /// tracked. <paramref name="isService"/> answers whether a subject is within one of the account's service exports.
    /// </summary>
    public static string? Check(int sampling, string results, Broker.Core.Auth.ServiceResponseType responseType, Func<string, bool> isService)
    {
        if (sampling is < 0 or > 100)
        {
            return "bad sampling percentage, should be 1-100";
        }

        var bytes = Encoding.UTF8.GetBytes(results);
        if (!Subjects.IsValidLiteral(bytes) || isService(results))
        {
            return "invalid publish subject";
        }

        return responseType == Broker.Core.Auth.ServiceResponseType.Singleton ? null : "bad service response type";
    }
}
