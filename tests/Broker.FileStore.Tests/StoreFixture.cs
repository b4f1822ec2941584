using System.Buffers;
using System.Text;
using Broker.Abstractions;
using Broker.Storage.FileStore;
using Broker.Storage.FileStore.Internal.Io;

namespace Broker.FileStore.Tests;

/// <summary>Creates, reopens and inspects file stores on a real temporary directory or a <see cref="SimulatedDisk"/>.</summary>
internal sealed class StoreFixture : IDisposable
{
    public StoreFixture(FileStoreOptions? options = null, bool simulated = false)
    {
        Root = Path.Combine(Path.GetTempPath(), "filestore-tests", Guid.NewGuid().ToString("N"));
        Options = options ?? new FileStoreOptions();
        if (simulated)
        {
            Disk = new SimulatedDisk(Root);
        }
        else
        {
            Directory.CreateDirectory(Root);
        }
    }

    public string Root { get; }

    public FileStoreOptions Options { get; set; }

    public SimulatedDisk? Disk { get; set; }

    public string StreamsDirectory => Path.Combine(Root, "jetstream", "$G", "streams");

    public string StreamDirectory(string name) => Path.Combine(StreamsDirectory, name);

    internal IStorageFileSystem FileSystem => Disk is null ? OsFileSystem.Instance : Disk;

    public IStreamStoreProvider Provider() => new FileStoreProvider(Options, null, FileSystem);

    public async Task<IStreamStore> CreateAsync(string name = "S", Func<StreamStoreConfig, StreamStoreConfig>? configure = null)
    {
        var config = new StreamStoreConfig { Name = name, Directory = StreamDirectory(name), Subjects = [name + ".>"], Metadata = Encoding.UTF8.GetBytes("{\"name\":\"" + name + "\"}") };
        config = configure?.Invoke(config) ?? config;
        return await Provider().CreateAsync(config);
    }

    /// <summary>Recovers every stream and returns the one named.</summary>
    public async Task<IStreamStore> ReopenAsync(string name = "S")
    {
        var stores = await Provider().RecoverAsync(new StoreRecoveryContext("$G", StreamsDirectory));
        var found = stores.Single(s => s.Config.Name == name);
        foreach (var other in stores.Where(s => s != found))
        {
            await other.DisposeAsync();
        }

        return found;
    }

    public static StoreResult Put(IStreamStore store, string subject, string payload, string? headers = null) =>
        store.Store(Encoding.UTF8.GetBytes(subject), headers is null ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(headers)), new ReadOnlySequence<byte>(Encoding.UTF8.GetBytes(payload)));

    public static (string Subject, string Payload, string Headers)? Get(IStreamStore store, ulong sequence)
    {
        var message = new StoredMessage();
        return store.Load(sequence, message) == LoadStatus.Found ? Text(message) : null;
    }

    public static (string Subject, string Payload, string Headers) Text(StoredMessage message) =>
        (Encoding.UTF8.GetString(message.Subject.Span), Encoding.UTF8.GetString(message.Payload.Span), Encoding.UTF8.GetString(message.Headers.Span));

    public void Dispose()
    {
        if (Disk is null && Directory.Exists(Root))
        {
            try
            {
                Directory.Delete(Root, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }
}
