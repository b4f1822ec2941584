using Broker.Abstractions;
using Broker.Storage.FileStore.Internal;
using Broker.Storage.FileStore.Internal.Io;
using Microsoft.Extensions.Logging;
using Microsoft.Extensions.Logging.Abstractions;

namespace Broker.Storage.FileStore;

/// <summary>
/// The <c>"file"</c> storage type: creates and recovers stream stores on disk under each stream's directory
/// (<c>&lt;store_dir&gt;/jetstream/&lt;account&gt;/streams/&lt;stream&gt;</c>). A publish is durable (and acknowledged by the
/// engine) only after its record is fsynced, one fsync shared by every publish waiting (group commit), unless
/// <see cref="FileStoreOptions.SyncInterval"/> opts out. See <c>docs/durability.md</c>.
/// </summary>
/// <remarks>Embedding: register an instance, <c>services.AddSingleton&lt;IStreamStoreProvider&gt;(new FileStoreProvider(options))</c>.</remarks>
public sealed class FileStoreProvider : IStreamStoreProvider
{
    /// <summary>The storage type name streams select with <c>storage: file</c>.</summary>
    public const string TypeName = "file";

    private readonly FileStoreOptions options;
    private readonly ILogger logger;
    private readonly IStorageFileSystem fs;

    /// <summary>Creates the provider.</summary>
    /// <param name="options">The settings (validated here).</param>
    /// <param name="loggerFactory">Where the stores log; none when <see langword="null"/>.</param>
    /// <exception cref="InvalidOperationException">A setting is invalid.</exception>
    public FileStoreProvider(FileStoreOptions options, ILoggerFactory? loggerFactory = null)
        : this(options, loggerFactory, OsFileSystem.Instance)
    {
    }

    internal FileStoreProvider(FileStoreOptions options, ILoggerFactory? loggerFactory, IStorageFileSystem fs)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        this.options = options;
        this.fs = fs;
        logger = (loggerFactory ?? NullLoggerFactory.Instance).CreateLogger("Broker.Storage.FileStore");
    }

    /// <inheritdoc/>
    public string StorageType => TypeName;

    /// <inheritdoc/>
    public StorageMedium Medium => StorageMedium.Disk;

    /// <inheritdoc/>
    public StoreFeatures Features => StoreFeatures.Timestamps | StoreFeatures.MessageTtl | StoreFeatures.SubjectExpiries;

    /// <inheritdoc/>
    public ValueTask<IStreamStore> CreateAsync(StreamStoreConfig config, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(config);
        if (config.Directory is null)
        {
            throw new InvalidOperationException("file storage needs a store directory: start JetStream with store_dir (-sd)");
        }

        try
        {
            return new ValueTask<IStreamStore>(FileStreamStore.Create(fs, options, logger, config));
        }
        catch (IOException ex)
        {
            throw new InvalidOperationException($"cannot create the stream's files: {ex.Message}", ex);
        }
        catch (UnauthorizedAccessException ex)
        {
            throw new InvalidOperationException($"cannot create the stream's files: {ex.Message}", ex);
        }
    }

    /// <inheritdoc/>
    public ValueTask<IReadOnlyList<IStreamStore>> RecoverAsync(StoreRecoveryContext context, CancellationToken cancellationToken = default)
    {
        ArgumentNullException.ThrowIfNull(context);
        var stores = new List<IStreamStore>();
        if (context.StreamsDirectory is null || !fs.DirectoryExists(context.StreamsDirectory))
        {
            return new ValueTask<IReadOnlyList<IStreamStore>>(stores);
        }

        foreach (var name in fs.ListDirectories(context.StreamsDirectory).Order(StringComparer.Ordinal))
        {
            cancellationToken.ThrowIfCancellationRequested();
            var path = Path.Combine(context.StreamsDirectory, name);
            try
            {
                var store = FileStreamStore.Open(fs, options, logger, path);
                if (store is not null && store.Config.StorageType == TypeName)
                {
                    stores.Add(store);
                }
            }
            catch (Exception ex) when (ex is InvalidOperationException or IOException or InvalidDataException or UnauthorizedAccessException)
            {
                // One unreadable stream (wrong key, damaged metadata) must not keep the others from starting.
                FileStoreLog.StreamUnreadable(logger, path, ex.Message);
            }
        }

        return new ValueTask<IReadOnlyList<IStreamStore>>(stores);
    }
}
