using System.Runtime.ExceptionServices;
using Broker.Abstractions;

namespace Broker.Bus.Tests;

/// <summary>
/// A request without an answer: thrown once (issue 25: the MQTT adapter's consumer deletes at a leave of 10,000 QoS 1
/// sessions time out by the thousand, and each was caught and thrown again with its subject).
/// </summary>
public sealed class BusRequestTimeoutTests
{
    private static readonly AsyncLocal<bool> Counting = new();

    [Fact(Timeout = 30_000)]
    public async Task A_request_without_an_answer_throws_one_timeout_naming_its_subject()
    {
        await using var broker = await TestBroker.StartAsync();
        await using var silent = broker.Bus.CreateClient();
        using var swallow = silent.Subscribe("svc.silent", null, (in BusMessage _) => { });
        await using var client = broker.Bus.CreateClient();

        var thrown = 0;
        void Count(object? sender, FirstChanceExceptionEventArgs e)
        {
            if (Counting.Value)
            {
                Interlocked.Increment(ref thrown);
            }
        }

        Task<BusReply> request;
        AppDomain.CurrentDomain.FirstChanceException += Count;
        try
        {
            Counting.Value = true;
            request = client.RequestAsync("svc.silent", "x"u8.ToArray(), TimeSpan.FromMilliseconds(200));
            await ((Task)request).ConfigureAwait(ConfigureAwaitOptions.SuppressThrowing | ConfigureAwaitOptions.ContinueOnCapturedContext);
            Counting.Value = false;
        }
        finally
        {
            AppDomain.CurrentDomain.FirstChanceException -= Count;
        }

        Assert.Equal(1, Volatile.Read(ref thrown));
        var timeout = Assert.IsType<TimeoutException>(request.Exception?.InnerException);
        Assert.Equal("No reply to the request on 'svc.silent' within 200 ms.", timeout.Message);
    }
}
