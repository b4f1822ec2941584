using System.Reflection;
using System.Runtime.CompilerServices;
using Broker.Core.Internal.Clients;
using Broker.Core.Internal.Protocol;

namespace Broker.Core.Tests.Protocol;

/// <summary>
/// The small helpers of the publish path that are forced inline. A fresh server's first client runs the precompiled
/// (ReadyToRun) code of that path until tier 1 replaces it, and crossgen2 left each of these a call per operation (per
/// byte for <c>IsSeparator</c>) through an indirection stub there: forced inline, a fresh server's first run of
/// 50,000 publishes took about a fifth less CPU on its parsing thread, and the steady rows (tier 1, which inlined them
/// where hot already) did not move beyond their spread (docs/benchmarks.md, "aggr1").
/// </summary>
public sealed class HotPathInliningTests
{
    private const BindingFlags Any = BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.Static | BindingFlags.Instance | BindingFlags.DeclaredOnly;

    public static TheoryData<Type, string> Marked => new()
    {
        { typeof(ArgumentSplitter), "IsSeparator" },
        { typeof(ArgumentSplitter), "TrimStart" },
        { typeof(ControlLineParser), "MatchesKeyword" },
        { typeof(ControlLineParser), "TakeArguments" },
        { typeof(ControlLineParser), "ParseSize" },
        { typeof(NatsClient), "get_ConnectRequired" },
        { typeof(ClientBase), "get_Producer" },
        { typeof(ClientBase), "CountDelivered" },
    };

    [Theory]
    [MemberData(nameof(Marked))]
    public void A_publish_path_helper_stays_forced_inline(Type type, string name)
    {
        var method = Assert.Single(type.GetMethods(Any), m => m.Name == name);
        Assert.True(
            method.MethodImplementationFlags.HasFlag(MethodImplAttributes.AggressiveInlining),
            $"{type.Name}.{name} lost [MethodImpl(MethodImplOptions.AggressiveInlining)]: without it the precompiled publish path calls it per operation, "
            + "which a fresh server's first client pays for (docs/benchmarks.md, \"aggr1\").");
    }

    [Fact]
    public void No_publish_path_method_is_compiled_at_full_optimisation()
    {
        // AggressiveOptimization was measured on the parser and publish handling and not kept: the method is then
        // compiled once without profile data, and tier 1's profile-guided inlining of the whole path is lost (steady
        // publish CPU per message +50% to +100%, docs/benchmarks.md, "aggr1").
        Type[] path = [typeof(ProtocolParser), typeof(ControlLineParser), typeof(ArgumentSplitter), typeof(NatsClient), typeof(ClientBase), typeof(PublishMatchCache)];
        var marked = path.SelectMany(t => t.GetMethods(Any).Where(m => m.MethodImplementationFlags.HasFlag(MethodImplAttributes.AggressiveOptimization)).Select(m => $"{t.Name}.{m.Name}"));
        Assert.Empty(marked);
    }
}
